"""Types, registry, data sources and readers shared by every benchmark."""
