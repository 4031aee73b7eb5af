# The two commands that matter on a fresh machine with only the Swift toolchain:
#   make demo   installs liblz4-dev (and postgresql for the sync step) if missing, builds, runs the demo
#   make test   installs what is missing (liblz4-dev, postgresql), runs the test suites (the sync
#               ones against a private PostgreSQL cluster it starts and stops) and the crash trials
SWIFT ?= swift
TRIALS ?= 1000
ENCRYPTED_TRIALS ?= 500
# The private PostgreSQL cluster of the sync tests (scripts/postgres.sh).
PGDIR ?= /tmp/shoal-pg-test
# The one of the demo's sync step.
PGDEMO ?= /tmp/shoal-pg-demo
SEED ?= 1
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: deps test lint demo bench fuzz docs clean

# liblz4 (and pkg-config, which SwiftPM asks for its flags) from Debian's packages.
deps:
	@if [ ! -f /usr/include/lz4.h ] || ! command -v pkg-config >/dev/null; then \
	  echo "installing liblz4-dev and pkg-config"; \
	  $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq liblz4-dev pkg-config >/dev/null; \
	fi

test: deps lint
	$(SWIFT) build --build-tests
	bash scripts/postgres.sh start $(PGDIR)
	SHOAL_PG_URL="$$(cat $(PGDIR)/url)" SHOAL_REQUIRE_POSTGRES=1 $(SWIFT) test || \
	  { bash scripts/postgres.sh stop $(PGDIR); exit 1; }
	bash scripts/postgres.sh stop $(PGDIR)
	$(SWIFT) build -c release --product shoal-stress
	.build/release/shoal-stress powerloss --trials $(TRIALS) --seed $(SEED)
	.build/release/shoal-stress corrupt --trials $(TRIALS) --seed $(SEED)
	.build/release/shoal-stress powerloss --trials $(ENCRYPTED_TRIALS) --seed $(SEED) --encrypted
	.build/release/shoal-stress corrupt --trials $(ENCRYPTED_TRIALS) --seed $(SEED) --encrypted
	.build/release/shoal-stress run --processes 6 --seconds 20 --kill-every 1 --stop-every 2 --seed $(SEED)

# Formatting and lint rules (swift-format, in the toolchain), as strict as CI.
lint:
	$(SWIFT) format lint --strict --recursive Sources Tests Tools Examples Plugins

# The DocC documentation of Shoal, ShoalStorage and ShoalLogging, built with swift-docc-plugin
# (fetched only for this: SHOAL_DOCS=1) in a build folder of its own; any warning fails it.
docs: deps
	SHOAL_DOCS=1 $(SWIFT) package --scratch-path .build-docs generate-documentation \
	  --target Shoal --target ShoalStorage --target ShoalLogging --target ShoalCombine --warnings-as-errors
	@echo "archives in .build-docs/plugins/Swift-DocC/outputs/"

demo: deps
	$(SWIFT) build --product shoal-demo
	$(SWIFT) build --product shoal
	$(SWIFT) build --product shoal-share-example
	$(SWIFT) build --product shoal-stress
	$(SWIFT) build --product shoal-sync-example
	rm -f demo.realm demo.realm.lock demo.realm.events.shoal demo.realm.events.shoal.lock
	.build/debug/shoal-demo demo.realm
	@echo "— the events recorded (shoal events demo.realm.events.shoal) —"
	.build/debug/shoal events demo.realm.events.shoal
	rm -f shared.shoal shared.shoal.lock
	.build/debug/shoal-share-example shared.shoal
	@echo "— the same with an encrypted file: both processes open it with its 64-byte key —"
	rm -f encrypted.shoal encrypted.shoal.lock demo.key
	head -c 64 /dev/urandom > demo.key
	.build/debug/shoal-share-example encrypted.shoal --key-file demo.key
	@echo "— without the key, shoal info prints only what the header says; with it, verify reads every block —"
	.build/debug/shoal info encrypted.shoal
	.build/debug/shoal verify encrypted.shoal --key-file demo.key
	@echo "— two devices (two processes, two files) syncing through a private PostgreSQL —"
	bash scripts/postgres.sh start $(PGDEMO)
	.build/debug/shoal-sync-example "$$(cat $(PGDEMO)/url)" || { bash scripts/postgres.sh stop $(PGDEMO); exit 1; }
	bash scripts/postgres.sh stop $(PGDEMO)
	@echo "— a short stress run: 4 processes, one killed every second, every invariant checked —"
	.build/debug/shoal-stress run --processes 4 --seconds 6 --kill-every 1 --seed 1
	@echo "— the file at the end (shoal info demo.realm) —"
	.build/debug/shoal info demo.realm

# Shoal side by side with LMDB and SQLite (needs liblmdb-dev and libsqlite3-dev).
bench: deps
	@if [ ! -f /usr/include/lmdb.h ] || [ ! -f /usr/include/sqlite3.h ]; then \
	  $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq liblmdb-dev libsqlite3-dev >/dev/null; \
	fi
	bash Benchmarks/bench.sh

# libFuzzer over opening and walking files (see the Tools article).
fuzz: deps
	$(SWIFT) build -c release --product shoal-fuzz --scratch-path .build-fuzz \
	  -Xswiftc -sanitize=fuzzer,address -Xswiftc -DSHOAL_FUZZING -Xswiftc -use-ld=lld
	.build-fuzz/release/shoal-fuzz -max_total_time=$${FUZZ_SECONDS:-60}
	SHOAL_FUZZ_ENCRYPTED=1 .build-fuzz/release/shoal-fuzz -max_total_time=$${FUZZ_SECONDS:-60}

clean:
	rm -rf .build .build-fuzz .build-docs Benchmarks/.build demo.realm demo.realm.lock demo.realm.events.shoal \
	  demo.realm.events.shoal.lock shared.shoal shared.shoal.lock encrypted.shoal encrypted.shoal.lock demo.key
