from punctum.cli import main

raise SystemExit(main())
