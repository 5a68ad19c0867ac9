"""`python -m kresched`."""

from kresched.cli import main

main()
