"""One module per subcommand; each exports ``<name>_command(args) -> int``."""
