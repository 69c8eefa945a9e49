#!/usr/bin/env python3
"""Launch the nerstudio desktop application.

python main.py                 # the bundled demo corpus
python main.py CORPUS          # any corpus file nerstudio reads
python main.py --screenshot out.png   # render the window (offscreen) and exit
"""

import sys

if __name__ == "__main__":
    # imported here, not above: training runs in child processes started with "spawn", which
    # import this file again as a module — they must not load the GUI (or Qt) for nothing
    from nerstudio.gui.app import main

    sys.exit(main())
