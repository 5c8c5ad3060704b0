from evaluators.cli import main

raise SystemExit(main())
