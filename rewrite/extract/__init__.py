"""Extraction: from the serialized e-graph and a cost function to the cheapest graph."""
