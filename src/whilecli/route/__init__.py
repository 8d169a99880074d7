"""route."""
