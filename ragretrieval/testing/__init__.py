"""Test kits shipped with the package, for code that plugs into ragretrieval (see store_conformance)."""
