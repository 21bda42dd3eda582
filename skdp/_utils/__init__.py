"""_utils"""
