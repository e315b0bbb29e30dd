"""svc's built-in kinds of interactive session: JupyterLab, TensorBoard and a command of your own."""
