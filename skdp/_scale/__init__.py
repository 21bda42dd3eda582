"""_scale"""
