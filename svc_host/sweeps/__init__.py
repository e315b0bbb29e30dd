"""Parameter sweeps: a workflow expanded over a matrix of arguments; every cell is an ordinary run."""
