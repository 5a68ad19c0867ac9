"""kresched: what must move so that an important Pending pod runs — planned, explained, carried out safely."""

__version__ = "0.1.0"

#: The Kubernetes release whose scheduler, kubectl and API server kresched follows.
KUBERNETES_VERSION = "v1.36"
