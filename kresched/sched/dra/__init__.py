"""Dynamic Resource Allocation, as kube-scheduler v1.36 does it with its default feature gates.

Three rooms, as upstream lays them out: the CEL environment for device selectors (`cel`), the
allocator, and the `DynamicResources` plugin. Notes with references: `../shared/dra.md`.
"""
