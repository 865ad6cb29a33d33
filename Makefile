# Tally — build, run and test.
#   make run    install what is missing, build and open the app
#   make test   install what is missing and run every test (what CI runs)

GO      ?= go
BIN     ?= tally
PKGS    := ./...

.PHONY: all deps build run test vet lint unit race fuzz smoke conformance acp realmodel realmodel-short bench clean package

all: build

deps:
	@bash scripts/deps.sh

build: deps
	$(GO) build -o $(BIN) .

run: build
	./$(BIN)

vet:
	$(GO) vet $(PKGS)
	@big=$$(find . -name '*.go' ! -name '*_test.go' -exec awk 'END { if (NR > 600) print FILENAME ": " NR " lines" }' {} \;); \
		if [ -n "$$big" ]; then echo "source files over 600 lines:"; echo "$$big"; exit 1; fi
	@out=$$(gofmt -l . | grep -v '^vendor/' || true); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

lint:
	$(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2 $(PKGS)

# The packages whose tests skip their long measured sessions under -short
# (found by the testing.Short() calls in their tests): they run once in
# full without the race detector, which would make those sessions several
# times slower. Every package, these included, runs under the race detector
# in the next stage, so every test runs at least once.
LONG_PKGS = $(shell grep -rl --include='*_test.go' --exclude-dir=.tools 'testing.Short()' . | xargs -n1 dirname | sort -u)

unit:
	$(GO) test -count=1 -timeout 25m $(LONG_PKGS)

# The race detector over every package (the UI, where engine events cross
# into Fyne's goroutine, the engine, the store, the command line and the
# internal packages). -short skips the long 300-request cache comparison
# and the other long sessions, which the plain run above covers.
race:
	$(GO) test -race -short -count=1 -timeout 25m $(PKGS)

# Every fuzz target (func FuzzX in a test file) for a few seconds each;
# FUZZTIME=1m make fuzz for a longer run.
fuzz:
	bash scripts/fuzz.sh

smoke: build
	bash scripts/smoke.sh

# The official MCP conformance suite's client scenarios against the built
# binary (scripts/conformance; it installs the suite and Node.js 22 from
# npm into .tools/conformance).
conformance: build
	bash scripts/conformance/run.sh

# `tally acp` driven end to end by the official ACP TypeScript SDK's client
# (scripts/acp; it installs the SDK and Node.js 22 from npm into .tools/acp).
acp: build
	TALLY=./$(BIN) bash scripts/acp/run.sh

# Tally against a real model on this machine: SmolLM2-135M through
# llama.cpp's llama-server (scripts/realmodel; the model is fetched and
# llama-server built once into .tools/realmodel): the wire, the prompt
# cache beside the ledger, and a small evaluation, with the tables in
# artifacts/realmodel (see docs/realmodel.md).
realmodel:
	bash scripts/realmodel/run.sh

# Its short form, a stage of make test: one turn of two requests. On a
# fresh clone it fetches the model and builds llama-server first (a lean
# build for this CPU: a few minutes on two cores, see docs/realmodel.md).
realmodel-short:
	bash scripts/realmodel/run.sh --short

# Every stage in order, each timed (scripts/stages.sh prints the table and
# writes it to artifacts/stages.txt).
test:
	@bash scripts/stages.sh deps vet unit race fuzz smoke conformance acp realmodel-short

bench:
	$(GO) test -run '^$$' -bench . -benchmem $(PKGS)

package: deps
	$(GO) run fyne.io/tools/cmd/fyne@v1.7.4 package --release

clean:
	rm -f $(BIN)
	rm -rf artifacts
