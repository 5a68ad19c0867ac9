"""Dynamic Resource Allocation as kube-scheduler v1.36 does it: the pools a node sees (`pools`), the
devices already allocated (`allocated`), and the allocator its default feature gates select
(`allocator`, with `constraints` and `capacity`; `diagnose` says why it failed on a node)."""
