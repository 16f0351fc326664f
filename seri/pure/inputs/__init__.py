"""What seri takes from outside: argv, config keys, settings, bounded JSON."""
