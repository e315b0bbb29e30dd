"""svc plugin: status changes as chat messages, through a durable outbox delivered by the server."""
