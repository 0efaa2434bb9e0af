"""`python -m cypherturn` runs the command line."""

from cypherturn.cli import main

main()
