// Shoal: RealmSwift's local-database API on the ShoalStorage engine.
//
// Code written for RealmSwift compiles with `import Shoal`. The engine (keyspaces, versions,
// the notifier) stays in `ShoalStorage`, which tools import directly.
