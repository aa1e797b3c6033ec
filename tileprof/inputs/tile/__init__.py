"""inputs/tile"""
