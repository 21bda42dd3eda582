"""_defaults"""
