"""kresched: what must move so that an important Pending pod runs — planned, explained, carried out safely."""

__version__ = "0.1.0"
