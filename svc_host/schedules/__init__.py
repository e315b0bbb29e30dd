"""Scheduled workflow runs: a workflow (or a sweep of one) fired on a cron expression or a fixed interval."""
