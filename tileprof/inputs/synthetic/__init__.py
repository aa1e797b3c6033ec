"""inputs/synthetic"""
