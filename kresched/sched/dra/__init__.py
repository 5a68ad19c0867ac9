"""Dynamic Resource Allocation, as kube-scheduler v1.36 does it with its default feature gates.

Three concerns, as upstream lays them out: which claims a pod uses and what is allocated in a
simulated cluster (`claims`, `inuse`), the allocator (`allocated`, `pools`, `allocator`), and the
CEL environment of device selectors (`cel`). The scheduler plugin itself is
`kresched.sched.dynamic_resources`, beside the other plugins. Pure.
"""
