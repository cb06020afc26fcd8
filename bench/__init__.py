"""Benchmark workloads for eqsat."""
