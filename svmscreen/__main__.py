import sys

from svmscreen._entry import main

sys.exit(main())
