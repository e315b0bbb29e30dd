"""Operations every face offers (jobs, pending reasons, efficiency, limits, waits), on the ports they are given."""
