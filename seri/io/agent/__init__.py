"""What goals keep in the store and read of the project tree."""
