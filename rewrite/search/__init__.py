"""Backtracking search over concrete graphs (TASO / MetaFlow style), beside equality saturation.

It uses the same parsed ``Rule`` objects as saturation; see issue "Backtracking search".
"""
