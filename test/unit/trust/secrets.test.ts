// The secret scrubber (trust/secrets.ts): one case per format it must recognise, each in
// the context it is usually pasted in, and ordinary code and prose that must come through
// unchanged (a scrubber that eats identifiers, commit ids or URLs corrupts memory and prompts).
// The keys below are made up in the documented shapes; none is real.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { scrubSecrets, scrubText } from "../../../extension/harness/trust/secrets.js";

/** `text` scrubbed holds none of `secret`, and says [redacted] where it was. */
function redacts(text: string, secret: string): string {
  const out = scrubText(text);
  assert.ok(!out.includes(secret), `still holds the secret: ${out}`);
  assert.match(out, /\[redacted\]/);
  return out;
}

const b62 = (n: number, seed = 7): string => {
  const abc = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  let s = "";
  let x = seed;
  for (let i = 0; i < n; i++) {
    x = (x * 1103515245 + 12345) % 2147483648;
    s += abc[x % abc.length];
  }
  return s;
};

describe("scrubText recognises", () => {
  it("OpenAI / Anthropic sk- keys", () => {
    redacts("export OPENAI_API_KEY=sk-proj-abcdefgh12345678", "sk-proj-abcdefgh12345678");
    redacts("key sk-ant-api03-ABCDEFGHIJKL", "sk-ant-api03-ABCDEFGHIJKL");
  });

  it("Stripe sk_live_ / rk_live_ (and test) keys", () => {
    const live = `sk_live_${b62(24)}`;
    const restricted = `rk_live_${b62(24, 3)}`;
    const out = redacts(`Stripe.apiKey = "${live}"; // restricted: ${restricted}`, live);
    assert.ok(!out.includes(restricted), out);
    redacts(`STRIPE_SECRET=sk_test_${b62(24, 9)}`, `sk_test_${b62(24, 9)}`);
  });

  it("Google API keys (AIza + 35)", () => {
    const key = `AIza${b62(35, 11)}`;
    assert.equal(scrubText(`maps?key=${key}&q=x`), "maps?key=[redacted]&q=x");
  });

  it("GitLab personal access tokens (glpat-)", () => {
    redacts(`git clone with token glpat-${b62(20, 5)}`, `glpat-${b62(20, 5)}`);
  });

  it("Hugging Face tokens (hf_)", () => {
    redacts(`HF_TOKEN=hf_${b62(34, 13)}`, `hf_${b62(34, 13)}`);
  });

  it("npm tokens (npm_)", () => {
    redacts(`//registry.npmjs.org/:_authToken=npm_${b62(36, 17)}`, `npm_${b62(36, 17)}`);
  });

  it("GitHub tokens (ghp_, gho_, …) and fine-grained github_pat_", () => {
    redacts(`token ghp_${b62(36, 19)}`, `ghp_${b62(36, 19)}`);
    const pat = `github_pat_${b62(22, 23)}_${b62(59, 29)}`;
    redacts(`GH_TOKEN=${pat}`, pat);
  });

  it("Slack tokens (xox?-)", () => {
    redacts("SLACK_BOT_TOKEN=xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx", "xoxb-123456789012");
    redacts("user token xoxp-1234567890-0987654321-1122334455-abcdef0123456789abcdef0123456789", "xoxp-1234567890");
    redacts("legacy xoxa-2-1234567890-abcdefabcdef", "xoxa-2-1234567890");
  });

  it("AWS access key ids and secret access keys", () => {
    redacts("aws_access_key_id = AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE");
    const secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
    assert.equal(scrubText(`aws_secret_access_key = ${secret}`), "aws_secret_access_key = [redacted]");
    redacts(`export AWS_SECRET_ACCESS_KEY="${secret}"`, secret);
    redacts(`My AWS secret key is ${secret}, keep it safe.`, secret);
  });

  it("JSON Web Tokens", () => {
    const jwt = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkFkYSJ9.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c";
    assert.equal(scrubText(`Authorization token: ${jwt}.`), "Authorization token: [redacted].");
  });

  it("Bearer credentials", () => {
    assert.equal(scrubText("curl -H 'Authorization: Bearer abc.DEF-123_456~xyz'"), "curl -H 'Authorization: [redacted]'");
  });

  it("PEM private keys, whole blocks and blocks cut off before their END line", () => {
    const body = `${b62(64, 31)}\n${b62(64, 37)}\n${b62(20, 41)}==`;
    const pem = `-----BEGIN RSA PRIVATE KEY-----\n${body}\n-----END RSA PRIVATE KEY-----`;
    assert.equal(scrubText(`key:\n${pem}\nthanks`), "key:\n[redacted]\nthanks");
    assert.equal(scrubText(`-----BEGIN PRIVATE KEY-----\n${b62(64, 43)}\n-----END PRIVATE KEY-----`), "[redacted]");
    const cut = scrubText(`-----BEGIN OPENSSH PRIVATE KEY-----\n${body}`);
    assert.equal(cut, "[redacted]");
    // A public key or certificate is not a secret.
    const pub = "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n-----END PUBLIC KEY-----";
    assert.equal(scrubText(pub), pub);
  });

  it("user:password in scheme://user:password@host URLs", () => {
    assert.equal(scrubText("DATABASE_URL=postgres://admin:s3cr3t!pass@db.internal:5432/app"), "DATABASE_URL=postgres://[redacted]@db.internal:5432/app");
    assert.equal(scrubText("git remote add origin https://ada:hunter2@github.com/ada/repo.git"), "git remote add origin https://[redacted]@github.com/ada/repo.git");
    assert.equal(scrubText("amqp://guest:guest@localhost"), "amqp://[redacted]@localhost");
  });
});

describe("scrubText leaves ordinary code and prose alone", () => {
  const unchanged = [
    "from huggingface_hub import hf_hub_download; hf_hub_download(repo_id='x')",
    "process.env.npm_config_user_agent ?? npm_lifecycle_event",
    "git checkout 3ce06fd1a2b3c4d5e6f708192a3b4c5d6e7f8091 && git log -1",
    "sha1: da39a3ee5e6b4b0d3255bfef95601890afd80709",
    "See https://github.com/bytedance/deer-flow and http://localhost:8080/path?a=b:c@d",
    "mailto:ada@example.com, ssh git@github.com:ada/repo.git",
    "const token: string = readToken(); let secretKey = config.secretKey;",
    "xoxo-hugs-and-kisses from the team",
    "The ticket ASIA-2024 is about the AKIA parser; sk- prefixes are documented.",
    "const jwt = header + '.' + payload; // eyJ... is base64 of {\"",
    "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIU\n-----END CERTIFICATE-----",
    "Stripe publishable keys look like pk_live_51H8abcdEFGH and are public.",
    "aws_secret_access_key = ${AWS_SECRET}",
  ];
  for (const text of unchanged) {
    it(JSON.stringify(text.slice(0, 60)), () => assert.equal(scrubText(text), text));
  }
});

describe("scrubSecrets", () => {
  it("drops secret-named keys and scrubs nested strings", () => {
    const key = `hf_${b62(34, 47)}`;
    assert.deepEqual(scrubSecrets({ api_key: "x", nested: { note: `use ${key}` }, list: ["ok", `ghp_${b62(36, 53)}`] }), {
      nested: { note: "use [redacted]" },
      list: ["ok", "[redacted]"],
    });
  });

  it("stays linear on crafted input (no pattern backtracks quadratically)", () => {
    // Shapes that would make a lazy or unbounded pattern rescan the rest of the text per start.
    const texts = [
      "-----BEGIN PRIVATE KEY-----".repeat(20_000),
      "a.".repeat(100_000),
      `${"x://".repeat(20_000)}`,
      `secret key ${"/".repeat(100_000)}`,
      `xoxb-${"a".repeat(200_000)}`,
    ];
    for (const t of texts) assert.equal(typeof scrubText(t), "string");
  });
});
