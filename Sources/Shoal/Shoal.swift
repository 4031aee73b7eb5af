// The object layer (RealmSwift's API) is built on ShoalStorage in a later issue. Until then
// the Shoal product re-exports the engine so that `import Shoal` gives access to it.
@_exported import ShoalStorage
