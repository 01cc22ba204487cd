import sys

from svmscreen.cli import main

sys.exit(main())
