package builtin_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/airlock-dev/airlock/backend/builtin"
	"github.com/airlock-dev/airlock/backend/core"
)

// fpSweepCommands are everyday developer and coding-agent command lines.
// None of them touches Airlock's data directory or runs Airlock, so none
// should be refused *because of* the self-protection (findings with rule
// airlock-data or airlock-itself), and only those in fpSweepAsks may ask
// (a helper's sweep of 280 commands, made a regression test).
var fpSweepCommands = []string{
	// git
	"git status", "git status --short", "git log --oneline -20", "git log -p -- src/",
	"git diff", "git diff HEAD~1 -- '*.go'", "git diff --stat main...HEAD",
	"git add -A && git commit -m 'fix: handle ~/ paths in config loader'",
	`git commit -m "docs: mention ~/.config/app and ./bin/tool"`,
	`git commit -am "refactor src/*.go"`,
	"git commit -m \"$(cat <<'EOF'\nfeat: add loader\n\nReads ~/.config/tool/config.yaml\nEOF\n)\"",
	"git clone https://github.com/example/repo.git", "git clone git@github.com:example/repo.git /tmp/repo",
	"git clone --depth 1 https://github.com/example/repo.git ../repo2",
	"git worktree add ../proj-feature -b feature", "git worktree list", "git worktree remove ../proj-feature",
	"git stash && git pull --rebase && git stash pop", "git checkout -b fix/thing", "git rebase -i HEAD~3",
	"git push -u origin HEAD", "git branch -a", "git show HEAD:src/main.go", "git blame src/main.go",
	"git config user.email", "git config --global user.name", "git ls-files | head", "git grep -n TODO",
	"git -C sub status", "git clean -fdx", "git reset --hard HEAD",
	// go
	"go build ./...", "go test ./...", "go test -run TestX -v ./pkg/...", "go vet ./...", "go mod tidy",
	"go run ./cmd/server", "go run main.go", "go install ./cmd/tool", "go env GOPATH", "go generate ./...",
	"gofmt -l .", "go build -o bin/tool ./cmd/tool", "go clean -cache", "go list -m all",
	// node
	"npm install", "npm ci", "npm run build", "npm test", "npm run lint -- --fix", "npx tsc --noEmit",
	"npx prettier --write 'src/**/*.ts'", "pnpm install", "pnpm -r build", "yarn", "yarn add -D vitest",
	"node scripts/build.js", "node -e 'console.log(process.version)'", "HOME=/tmp/h npm ci",
	"npm config get prefix", "npm cache clean --force",
	// python
	"pip install -r requirements.txt", "pip install -e .", "python -m venv .venv", "source .venv/bin/activate",
	". .venv/bin/activate && pytest -q", "python -m pytest tests/", "python -m http.server 8000",
	"python3 scripts/gen.py --out build/", "uv sync", "ruff check .", "mypy src",
	// rust, make
	"cargo build --release", "cargo test", "cargo clippy -- -D warnings", "cargo fmt", "cargo run -- --help",
	"make", "make test", "make -C sub install PREFIX=$HOME/.local", "make -j8 all",
	// listing and search
	"ls", "ls -la", "ls *", "ls */*", "ls -d */", "ls ../*", "ls ..", "ls src/**/*.go", "ls -la ~", "ls ~/.config",
	"ls ~/.cache", "ls ~/.local/bin", "ls -a ~/", "ls /tmp",
	"find . -name '*.go'", "find . -type f -name '*.ts' | xargs wc -l", "find . -name node_modules -prune -o -type f -print",
	"find ~ -maxdepth 1 -type d", "find .. -maxdepth 2 -name go.mod", "find / -name libssl.so 2>/dev/null",
	"find . -name '*.orig' -delete", "find . -type f -exec sed -i 's/foo/bar/g' {} +",
	"grep -rn TODO .", "grep -rn 'func main' --include='*.go' .", "grep -r foo ../other-proj", "grep -rn foo */*",
	"rg TODO", "rg -n 'HOME' src/", "rg --hidden -g '!.git' config", "rg foo ~/src", "fd '\\.go$'", "fd -e ts . src",
	"tree -L 2", "wc -l **/*.go", "cat README.md", "head -50 src/main.go", "less go.mod", "cat ~/.config/git/config",
	"cat ~/.gitconfig", "cat ~/.ssh/config", "cat /etc/os-release", "du -sh ~", "du -sh *", "du -sh ~/.cache",
	"df -h", "stat notes.txt", "file bin/tool",
	// files
	"cp notes.txt notes.bak", "cp -r src /tmp/src-copy", "cp *.go /tmp/", "mv notes.txt docs/", "mv build /tmp/old-build",
	"rm -rf node_modules", "rm -rf build dist", "rm -f *.log", "rm -rf /tmp/scratch", "mkdir -p build/out",
	"mkdir -p ~/.local/bin", "cp bin/tool ~/.local/bin/", "chmod +x ~/.local/bin/tool", "install -m755 bin/tool ~/.local/bin/tool",
	"ln -s ~/.local/bin/tool bin/tool-link", "touch new.go", "tar czf /tmp/proj.tgz .", "tar czf ~/backup.tgz .",
	"tar xzf /tmp/archive.tgz", "tar xzf vendor.tgz -C vendor", "zip -r /tmp/proj.zip . -x '.git/*'", "unzip -o /tmp/a.zip -d out",
	"rsync -av --exclude node_modules ./ /tmp/mirror/", "chmod -R u+w .", "sed -i 's/old/new/g' src/*.go",
	"sed -i '' -e 's|~/old|~/new|' config.yaml", "perl -pi -e 's/foo/bar/' **/*.py",
	// cd and directory stack
	"cd sub && ls", "cd sub && make", "cd .. && ls", "cd .. && git status", "cd ~ && ls", "cd ~ && ls -la", "cd -",
	"cd sub; cd -; ls", "pushd sub && make && popd", "pushd /tmp && ls && popd", "cd /tmp && ls *", "cd ~/src && ls",
	"cd ../ && ls */", "cd $HOME && du -sh *", "cd ~/.config && ls",
	// heredocs and scripts
	"cat > main.go <<'EOF'\npackage main\n\nimport \"os\"\n\nfunc main() {\n\thome, _ := os.UserHomeDir()\n\t_ = home + \"/.config/tool\"\n}\nEOF",
	"cat > config.sh <<'EOF'\nCONF=~/.config/tool\nmkdir -p \"$CONF\"\ncp defaults.yaml ~/.config/tool/\nEOF",
	"cat > README.md <<EOF\nInstall to ~/.local/bin and run tool --help\nEOF",
	"cat <<'EOF' > .env\nDATA_DIR=$HOME/.local/share/tool\nEOF",
	"tee src/x.py <<'EOF'\nimport os\nprint(os.path.expanduser('~/.config'))\nEOF",
	"for f in *.go; do gofmt -w \"$f\"; done", "for f in src/*.ts; do echo $f; done",
	"for d in */; do (cd \"$d\" && git pull); done", "for i in 1 2 3; do echo $i; done",
	"ls *.txt | xargs -I{} cp {} /tmp/", "git ls-files -z | xargs -0 grep -l foo", "find . -name '*.tmp' | xargs rm -f",
	"while read -r f; do echo \"$f\"; done < files.txt",
	// network, containers, remote
	"curl -sSL https://example.com/install.sh -o /tmp/install.sh", "curl -o data.json https://api.example.com/x",
	"curl -fsSL https://example.com | head", "wget -O /tmp/x.tgz https://example.com/x.tgz",
	"docker build -t app .", "docker run --rm -v $PWD:/src -w /src golang:1.22 go test ./...",
	"docker run --rm -v \"$(pwd)\":/app node:20 npm ci", "docker compose up -d", "docker ps", "docker logs -f app",
	"ssh user@host 'ls ~/.config'", "ssh host uptime", "scp build/app user@host:~/bin/", "scp user@host:~/.config/app.yml /tmp/",
	"rsync -av dist/ host:/var/www/",
	// env, shell
	"echo $HOME", "echo ~", "echo $PATH", "export PATH=$HOME/.local/bin:$PATH", "export GOPATH=$HOME/go",
	"XDG_CONFIG_HOME=/tmp/xdg ./bin/tool", "XDG_CONFIG_HOME=$PWD/.config go test ./...", "env | sort", "printenv HOME",
	"which go", "type node", "command -v git", "source ~/.bashrc", "pwd", "whoami", "uname -a", "date",
	"ps aux | grep node", "kill %1", "lsof -i :8080", "sleep 1", "true", "jq .name package.json",
	"echo 'hello' > out.txt", "printf '%s\\n' a b > list.txt", "diff -u a.txt b.txt", "patch -p1 < fix.patch",
	// editors
	"vim src/main.go", "nano README.md", "code .", "code ~/.config/Code/User/settings.json", "emacs -nw main.go",
	"vi ~/.bashrc", "nvim ~/.config/nvim/init.lua", "code ~",
	// more home-folder work
	"cp -r . ~/backup/proj", "rsync -a ./ ~/backup/proj/", "mv ~/Downloads/x.zip .", "cp bin/tool ~/",
	"rm -rf ~/.cache/go-build", "ln -sf $PWD/bin/tool ~/.local/bin/tool", "chmod 600 ~/.ssh/config",
	"tar czf nvim.tgz ~/.config/nvim", "ls -la ~/.config/", "grep -r foo ~/.config/nvim", "cp -r ~/.config/nvim .",
	"find ~/.config -name '*.lua'", "rg foo ~/src", "grep -rn TODO ~/src", "du -sh ~/.config", "du -sh ~/*",
	"mkdir -p ~/src/new && cd ~/src/new && git init", "cd ~ && git clone https://github.com/example/repo.git",
	"git clone https://github.com/example/repo.git ~/src/repo", "cd ~/src/other && git pull",
	"docker run --rm -v ~/.ssh:/root/.ssh:ro alpine ls /root/.ssh", "export XDG_CONFIG_HOME=$HOME/.config",
	"npm install -g pnpm", "pip install --user httpie", "go install golang.org/x/tools/gopls@latest",
	"sudo apt-get install -y jq", "brew install jq", "cd ~/.config && git status", "ls -d ~/.*",
	"rm -rf ~/.npm/_cacache", "touch ~/.bashrc && source ~/.bashrc", "echo 'export X=1' >> ~/.bashrc",
	"cat ~/.config/nvim/init.lua | head", "cd /tmp && tar xzf x.tgz", "mktemp -d", "cp notes.txt \"$(mktemp -d)\"",
	"TMP=$(mktemp -d) && cp -r . $TMP", "cp -r . /", "ls /", "du -sh /home/*",
	"ls ~/.config/*/", "cat ~/.config/*/config", "grep -r foo ~/.config", "rg -l TODO ~", "ls -R ~/.config",
	"cd ~/.config && git add -A && git commit -m wip", "rsync -a ~/.config/ /tmp/cfg-backup/",
}

// fpSweepAsks are the everyday commands that ask because of the
// self-protection, and why: they change, or copy whole, a folder that holds
// the data directory, or name it among its neighbours.
var fpSweepAsks = []string{
	"cp bin/tool ~/",                       // into the home folder itself
	"cp -r . /",                            // into /
	"ls ~/.config/*/",                      // the data directory among its neighbours
	"rsync -a ~/.config/ /tmp/cfg-backup/", // copies it whole
	"cp -r ~/.config /tmp/x",               // the same
	"tar czf /tmp/home.tgz ~",              // the same
}

// fpSweepControls must be refused or asked by the self-protection; they
// show the sweep's setup has it switched on.
var fpSweepControls = []string{
	"cat ~/.config/airlock/rules.json", "rm -rf ~/.config/airlock", "airlock --version", "ls ~/.config/airlock",
}

// fpSweepBuiltin is selfProtected with a home folder that looks lived in.
func fpSweepBuiltin(t *testing.T, home, proj string) *builtin.Builtin {
	t.Helper()
	for _, f := range []string{
		".config/git/config", ".config/nvim/init.lua", ".config/Code/User/settings.json",
		".cache/go-build/x", ".local/bin/.keep", ".bashrc", ".gitconfig", ".ssh/config", "src/other/README",
	} {
		mustWrite(t, filepath.Join(home, f), "x")
	}
	for _, f := range []string{
		"sub/Makefile", "src/main.go", "src/pkg/a.go", "bin/tool", "node_modules/x/index.js",
		"build/out.txt", "docs/a.md", "a.txt", "b.txt", "main.go", "config.yaml",
	} {
		mustWrite(t, filepath.Join(proj, f), "x")
	}
	return selfProtected(t, home, proj)
}

func TestFPSweep(t *testing.T) {
	base := t.TempDir()
	for _, layout := range []struct{ name, home, proj string }{
		{"under-home", filepath.Join(base, "h1"), filepath.Join(base, "h1", "src", "proj")},
		{"outside-home", filepath.Join(base, "h2"), filepath.Join(base, "work", "proj")},
	} {
		if err := os.MkdirAll(layout.proj, 0o755); err != nil {
			t.Fatal(err)
		}
		b := fpSweepBuiltin(t, layout.home, layout.proj)
		// t.TempDir lives in /tmp, so /tmp holds the test's data directory
		// (copies into /tmp would ask for that reason alone). Commands use
		// a scratch folder beside the home folder instead.
		tmp := filepath.Join(base, "tmp")
		if err := os.MkdirAll(tmp, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, cmd := range fpSweepCommands {
			cl, err := b.ClassifyCommand(strings.ReplaceAll(cmd, "/tmp", tmp), nil)
			if err != nil {
				t.Errorf("[%s] %q: %v", layout.name, cmd, err)
				continue
			}
			for _, f := range cl.Findings {
				if f.Rule != "airlock-data" && f.Rule != "airlock-itself" {
					continue
				}
				if f.Outcome == core.Deny || !slices.Contains(fpSweepAsks, cmd) {
					t.Errorf("[%s] %s %q: %s: %s", layout.name, f.Outcome, strings.ReplaceAll(cmd, "\n", `\n`), f.Rule, f.Reason)
				}
			}
		}
		for _, cmd := range fpSweepAsks {
			if cl, err := b.ClassifyCommand(strings.ReplaceAll(cmd, "/tmp", tmp), nil); err != nil || cl.Outcome != core.Ask {
				t.Errorf("[%s] %q: %s %v, want it asked", layout.name, cmd, cl.Outcome, err)
			}
		}
		for _, cmd := range fpSweepControls {
			if cl, err := b.ClassifyCommand(cmd, nil); err != nil || cl.Outcome == core.Allow {
				t.Errorf("[%s] control %q: %s %v, want it refused or asked", layout.name, cmd, cl.Outcome, err)
			}
		}
	}
}
