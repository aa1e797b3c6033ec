"""inputs/gpu"""
