"""What runs while svc runs: the status monitor, scheduler snapshots, the resource sampler, the submit throttle,
leases and the event hub."""
