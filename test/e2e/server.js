'use strict';
// Starts and stops the MongoDB wire-protocol server used by the end-to-end
// tests: mongoeco (pure Python, needs Python >= 3.13) behind
// test/e2e/mongoeco_server.py. Nothing happens on load.
//
// startServer() finds Python 3.13, creates `.venv-e2e/` at the repository root
// with mongoeco and pymongo (once), starts the server on a free loopback port
// and resolves to { uri, port, stop() }. Any failure rejects with an Error
// whose message says what is missing: the tests must fail, not skip.
const { spawn, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..', '..');
const VENV = path.join(ROOT, '.venv-e2e');
const LAUNCHER = path.join(__dirname, 'mongoeco_server.py');
// The launcher hooks mongoeco's wire proxy internals: pin what it was written against.
const REQUIREMENTS = ['mongoeco==4.11.0', 'pymongo==4.20.1'];
const STAMP = path.join(VENV, 'bson-rs-e2e.txt');

function prefix(message) {
  return `e2e: cannot start the MongoDB test server (mongoeco): ${message}`;
}

function probe(command, env) {
  const r = spawnSync(command, ['-c', 'import sys; print("%d.%d" % sys.version_info[:2])'], {
    env,
    encoding: 'utf8',
    timeout: 30000
  });
  if (r.status !== 0 || typeof r.stdout !== 'string') return null;
  const [major, minor] = r.stdout.trim().split('.').map(Number);
  return major === 3 && minor >= 13 ? r.stdout.trim() : null;
}

/** Returns { command, env } for a Python >= 3.13, or throws one clear line. */
function findPython() {
  const tried = [];
  const candidates = [];
  if (process.env.BSON_RS_E2E_PYTHON) {
    candidates.push({ command: process.env.BSON_RS_E2E_PYTHON, env: process.env, label: '$BSON_RS_E2E_PYTHON' });
  }
  candidates.push({
    command: 'python3.13',
    env: { ...process.env, PYENV_VERSION: '3.13.0' },
    label: 'PYENV_VERSION=3.13.0 python3.13'
  });
  const pyenvRoot = process.env.PYENV_ROOT || path.join(os.homedir(), '.pyenv');
  let versions = [];
  try {
    versions = fs
      .readdirSync(path.join(pyenvRoot, 'versions'))
      .filter((v) => /^3\.1[3-9]/.test(v))
      .sort()
      .reverse();
  } catch {
    // no pyenv
  }
  for (const v of versions) {
    candidates.push({
      command: path.join(pyenvRoot, 'versions', v, 'bin', 'python3.13'),
      env: process.env,
      label: `${pyenvRoot}/versions/${v}/bin/python3.13`
    });
  }
  candidates.push({ command: 'python3.13', env: process.env, label: 'python3.13 on PATH' });
  for (const c of candidates) {
    tried.push(c.label);
    if (probe(c.command, c.env) !== null) return c;
  }
  throw new Error(prefix(`no Python 3.13 found (tried: ${tried.join('; ')}); install Python 3.13 or set BSON_RS_E2E_PYTHON`));
}

/**
 * Null when the server can be set up as far as Python goes (.venv-e2e is ready,
 * or a Python 3.13 is found), else one line saying what is missing.
 */
function pythonMissing() {
  if (venvReady()) return null;
  try {
    findPython();
    return null;
  } catch {
    return `no Python 3.13 for the mongoeco server (install it, e.g. \`pyenv install 3.13\`, or set BSON_RS_E2E_PYTHON)`;
  }
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

async function withLock(fn) {
  const lock = VENV + '.lock';
  const deadline = Date.now() + 10 * 60 * 1000;
  for (;;) {
    try {
      fs.mkdirSync(lock);
      break;
    } catch (e) {
      if (e.code !== 'EEXIST') throw e;
      try {
        if (Date.now() - fs.statSync(lock).mtimeMs > 10 * 60 * 1000) fs.rmSync(lock, { recursive: true, force: true });
      } catch {
        // vanished meanwhile
      }
      if (Date.now() > deadline) throw new Error(prefix(`timed out waiting for ${lock}`));
      await sleep(500);
    }
  }
  try {
    return await fn();
  } finally {
    fs.rmSync(lock, { recursive: true, force: true });
  }
}

function run(command, args, env, what) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('error', (e) => reject(new Error(prefix(`${what}: ${e.message}`))));
    child.on('close', (code) => {
      if (code === 0) resolve(out);
      else {
        const tail = out.trim().split('\n').slice(-5).join(' | ');
        reject(new Error(prefix(`${what} failed (exit ${code}): ${tail}`)));
      }
    });
  });
}

function venvPython() {
  return process.platform === 'win32' ? path.join(VENV, 'Scripts', 'python.exe') : path.join(VENV, 'bin', 'python');
}

function venvReady() {
  try {
    return fs.readFileSync(STAMP, 'utf8') === REQUIREMENTS.join('\n') && fs.existsSync(venvPython());
  } catch {
    return false;
  }
}

/** Creates .venv-e2e with the pinned requirements unless it is already there. */
async function ensureVenv() {
  const wanted = REQUIREMENTS.join('\n');
  const ready = venvReady;
  if (ready()) return venvPython();
  return withLock(async () => {
    if (ready()) return venvPython();
    const python = findPython();
    fs.rmSync(VENV, { recursive: true, force: true });
    await run(python.command, ['-m', 'venv', VENV], python.env, 'creating the virtualenv .venv-e2e');
    const env = { ...process.env, PIP_DISABLE_PIP_VERSION_CHECK: '1' };
    delete env.PYENV_VERSION;
    await run(venvPython(), ['-m', 'pip', 'install', '--quiet', ...REQUIREMENTS], env, `pip install ${REQUIREMENTS.join(' ')}`);
    fs.writeFileSync(STAMP, wanted);
    return venvPython();
  });
}

/**
 * Starts a server; resolves to { uri, port, stop }. stop() resolves once the
 * process has exited. The server also exits when this process dies (its stdin closes).
 */
async function startServer({ timeoutMs = 120000 } = {}) {
  const python = await ensureVenv();
  const env = { ...process.env, PYTHONUNBUFFERED: '1' };
  delete env.PYENV_VERSION;
  const child = spawn(python, [LAUNCHER, '0'], { env, stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => {
    stderr += d;
    if (stderr.length > 20000) stderr = stderr.slice(-20000);
  });
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  const port = await new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(prefix(`no LISTENING line within ${timeoutMs} ms; stderr: ${stderr.trim().slice(-500)}`)));
    }, timeoutMs);
    child.stdout.on('data', (d) => {
      out += d;
      const m = /LISTENING (\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    });
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(new Error(prefix(e.message)));
    });
    exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(prefix(`server exited early (code ${code}, signal ${signal}); stderr: ${stderr.trim().slice(-500)}`)));
    });
  });
  let stopping = null;
  const stop = () => {
    if (stopping === null) {
      child.stdin.end();
      const timer = setTimeout(() => child.kill('SIGTERM'), 5000);
      stopping = exited.then((r) => {
        clearTimeout(timer);
        return r;
      });
    }
    return stopping;
  };
  return { uri: `mongodb://127.0.0.1:${port}/?directConnection=true`, port, stop, stderr: () => stderr };
}

module.exports = { startServer, findPython, pythonMissing, ensureVenv, VENV };
