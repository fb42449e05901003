"""``python -m tcpsack_analyze``: the command line, as ``tcpsack-analyze``."""
from tcpsack_analyze.cli import main

main()
