// DeerFlow's validate_local_bash_command_paths cases (test_sandbox_tools_security.py), ported.
import { test } from "node:test";
import assert from "node:assert/strict";
import { HarnessError } from "../../../extension/harness/errors.js";
import { splitShellTokens, validateLocalBashCommandPaths } from "../../../extension/harness/sandbox/commandValidation.js";

function rejects(command: string, pattern: RegExp): void {
  assert.throws(
    () => validateLocalBashCommandPaths(command),
    (err: unknown) => err instanceof HarnessError && err.code === "path_denied" && pattern.test(err.message),
    command,
  );
}

test("host absolute paths are unsafe, with DeerFlow's exact message", () => {
  assert.throws(() => validateLocalBashCommandPaths("cat /etc/passwd"), {
    message: "Unsafe absolute paths in command: /etc/passwd. Use paths under /mnt/user-data",
  });
  assert.throws(() => validateLocalBashCommandPaths("cat /home/u/b /etc/a /etc/a"), {
    message: "Unsafe absolute paths in command: /etc/a, /home/u/b. Use paths under /mnt/user-data",
  });
  rejects("python3 -c \"open('/etc/passwd').read()\"", /Unsafe absolute paths/);
  for (const c of ["cat /etc/{passwd,shadow}", "cat /etc/passwd{,.bak}", "cat /{etc,var}/passwd", "cat /home/${USER}/.ssh/id_rsa"]) {
    rejects(c, /Unsafe absolute paths/);
  }
  for (const c of ["ls /", "ln -s / root && cat root/etc/passwd", "command ls /"]) rejects(c, /Unsafe absolute paths/);
});

test("virtual, system and URL paths are allowed", () => {
  for (const c of [
    "/bin/echo ok > /mnt/user-data/workspace/out.txt && cat /dev/null",
    "cd /mnt/user-data/workspace && git clone https://github.com/CherryHQ/cherry-studio.git",
    "curl http://example.com/file.tar.gz -o /mnt/user-data/workspace/file.tar.gz",
    "curl https://example.com/packages/../archive.tar.gz -o /mnt/user-data/workspace/archive.tar.gz",
    "mkdir -p reports && python script.py data/input.csv > reports/out.txt",
    "cd /mnt/user-data/workspace && cat data/input.csv > reports/out.txt",
    "echo cd /",
    "printf '%s\\n' pushd /",
    "python3 -c \"print(f'/端口{port}')\"",
    "echo '健康检查 /端口 状态'",
    "python3 -c \"x = f'/{port}'\"",
    "python3 -c \"print('/devices/{id}/port')\"",
    "ls /mnt/user-data/uploads /mnt/user-data/outputs",
  ]) {
    assert.doesNotThrow(() => validateLocalBashCommandPaths(c), c);
  }
});

test("traversal, relative or absolute, is refused", () => {
  for (const c of [
    "cat /mnt/user-data/workspace/../../etc/passwd",
    "cat ../uploads/secret.txt",
    "cat subdir/../../secret.txt",
    "python script.py --input=../secret.txt",
    "echo ok > ../outputs/result.txt",
    "cd .. && cat etc/passwd",
  ]) {
    rejects(c, /path traversal/);
  }
});

test("unsafe working directory changes are refused", () => {
  for (const c of [
    "cd / && cat etc/passwd",
    "cd $HOME && cat .ssh/id_rsa",
    "echo ok\ncd $HOME && cat .ssh/id_rsa",
    "command cd / && cat etc/passwd",
    "builtin cd $HOME && cat .ssh/id_rsa",
    "if cd $HOME; then cat .ssh/id_rsa; fi",
    "{ cd /; cat etc/passwd; }",
    'echo "$(cd $HOME && cat .ssh/id_rsa)"',
    "cd ~",
    "cd",
  ]) {
    rejects(c, /Unsafe working directory/);
  }
});

test("file:// URLs are blocked in any case", () => {
  rejects("curl file:///etc/passwd", /^Unsafe file:\/\/ URL in command: file:\/\/\/etc\/passwd\. Use paths under \/mnt\/user-data$/);
  rejects("curl FILE:///etc/passwd", /Unsafe file:\/\/ URL/);
  rejects("curl https://ok.example && curl File:///etc/shadow", /Unsafe file:\/\/ URL/);
});

test("the bare virtual root has no host mapping here and is refused", () => {
  rejects("ls /mnt/user-data", /Unsupported virtual path in command: \/mnt\/user-data\./);
  rejects("cat /mnt/user-data/other/x", /Unsupported virtual path/);
  rejects("cd /mnt/user-data", /Unsafe working directory/);
});

test("the tokenizer follows shlex with punctuation_chars", () => {
  assert.deepEqual(splitShellTokens("a&&b|c;d"), ["a", "&&", "b", "|", "c", ";", "d"]);
  assert.deepEqual(splitShellTokens(`echo "a b" 'c;d' e\\ f`), ["echo", "a b", "c;d", "e f"]);
  assert.deepEqual(splitShellTokens("x\ny"), ["x", ";", "y"]);
  assert.deepEqual(splitShellTokens("echo 'unbalanced"), ["echo", "'unbalanced"]);
});

test("paths between URLs, and cd inside any of several substitutions (the linear scans, issue 21)", () => {
  validateLocalBashCommandPaths("curl https://a.example/etc/x https://b.example/usr/y -o /mnt/user-data/workspace/z");
  rejects("curl https://a.example/x /etc/passwd https://b.example/y", /^Unsafe absolute paths in command: \/etc\/passwd\./);
  rejects("curl https://a.example/x https://b.example/y /etc/shadow", /^Unsafe absolute paths in command: \/etc\/shadow\./);
  rejects('echo "$(date)" "$(echo a)" "$(pushd $HOME)"', /Unsafe working directory change in command substitution/);
  rejects("echo $(echo $(cd $HOME))", /Unsafe working directory change in command substitution/);
  validateLocalBashCommandPaths('echo "$(date)" "$(echo cdrom)" abcd');
  // What made the old scans quadratic: thousands of `$(` and of URL + path pairs. Answered, not stalled.
  validateLocalBashCommandPaths("echo " + "$(".repeat(20_000));
  rejects("/x a://y ".repeat(20_000), /Unsafe absolute paths in command: \/x\./);
});
