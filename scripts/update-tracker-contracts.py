#!/usr/bin/env python3
"""Regenerates the tracker contract descriptions the relay-tracker tests check requests and the
fakes' answers against (crates/relay-tracker/contracts/):

  github.json  the operations Relay's GitHub client can call, cut from GitHub's official OpenAPI
               description (npm @octokit/openapi, generated/api.github.com.json): each operation's
               declared parameters, request body schema and JSON response schemas, with every
               component schema they reference. OpenAPI 3.0's `nullable` is rewritten into JSON
               Schema (type [T, "null"]) so the tests validate with a plain JSON Schema validator.
  gitlab.json  GitLab v4 endpoints from a maintained client library (Debian
               golang-github-xanzy-go-gitlab-dev, the go-gitlab source): per client function its
               method, path and the parameter names its options struct declares.

Usage (npm and apt need the registries; `cargo test` does not, it reads the committed files):

  scripts/update-tracker-contracts.py                 # npm pack @octokit/openapi; apt go-gitlab
  scripts/update-tracker-contracts.py --octokit DIR   # an @octokit/openapi package unpacked

The operations below are the client's whole surface: a request the client makes that is not one
of them fails the contract tests, so adding a call to the client means adding it here.
"""

import argparse
import copy
import hashlib
import json
import pathlib
import re
import subprocess
import sys
import tarfile
import tempfile

OCTOKIT_VERSION = "23.0.2"
ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "crates" / "relay-tracker" / "contracts"

# (method, path template) of every request relay_tracker::github makes.
GITHUB_OPERATIONS = [
    ("get", "/app"),
    ("post", "/app/installations/{installation_id}/access_tokens"),
    ("get", "/repos/{owner}/{repo}/installation"),
    ("get", "/user"),
    ("get", "/repos/{owner}/{repo}"),
    ("get", "/repos/{owner}/{repo}/issues"),
    ("get", "/repos/{owner}/{repo}/issues/{issue_number}"),
    ("get", "/repos/{owner}/{repo}/issues/{issue_number}/comments"),
    ("post", "/repos/{owner}/{repo}/issues/{issue_number}/comments"),
    ("get", "/repos/{owner}/{repo}/issues/comments"),
    ("get", "/repos/{owner}/{repo}/issues/comments/{comment_id}"),
    ("patch", "/repos/{owner}/{repo}/issues/comments/{comment_id}"),
    ("post", "/repos/{owner}/{repo}/issues/{issue_number}/reactions"),
    ("post", "/repos/{owner}/{repo}/issues/comments/{comment_id}/reactions"),
    ("get", "/repos/{owner}/{repo}/collaborators/{username}/permission"),
]

# go-gitlab's files that hold the endpoints Relay's GitLab client calls (users, issues, notes,
# discussions, award emoji, project members); every endpoint in them is extracted, and the test
# accepts a request only when one of them declares its method, path and parameters.
GO_GITLAB_FILES = ["users.go", "issues.go", "notes.go", "discussions.go", "award_emojis.go",
                   "project_members.go"]
GO_GITLAB_PACKAGE = "golang-github-xanzy-go-gitlab-dev"
GO_GITLAB_SRC = pathlib.Path("/usr/share/gocode/src/github.com/xanzy/go-gitlab")

def sha256(path):
    return hashlib.sha256(pathlib.Path(path).read_bytes()).hexdigest()


def npm_pack(package, version, work):
    subprocess.run(["npm", "pack", "--silent", f"{package}@{version}"], cwd=work, check=True,
                   stdout=subprocess.DEVNULL)
    tgz = next(pathlib.Path(work).glob("*.tgz"))
    with tarfile.open(tgz) as tar:
        tar.extractall(work, filter="data")
    return pathlib.Path(work) / "package", sha256(tgz)


def denull(schema):
    """OpenAPI 3.0 schema → JSON Schema 2020-12 (nullable, $ref paths)."""
    if isinstance(schema, list):
        return [denull(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {}
    for key, value in schema.items():
        if key == "$ref":
            out[key] = value.replace("#/components/schemas/", "#/$defs/")
        elif key in ("properties", "patternProperties"):
            out[key] = {k: denull(v) for k, v in value.items()}
        elif key in ("example", "examples", "description", "externalDocs", "xml",
                     "discriminator", "readOnly", "writeOnly", "deprecated") or key.startswith("x-"):
            continue
        else:
            out[key] = denull(value)
    if out.pop("nullable", False):
        if isinstance(out.get("type"), str):
            out["type"] = [out["type"], "null"]
            if "enum" in out and None not in out["enum"]:
                out["enum"] = out["enum"] + [None]
        else:
            out = {"anyOf": [out, {"type": "null"}]}
    return out


def refs(value, found):
    if isinstance(value, dict):
        ref = value.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/components/schemas/"):
            found.add(ref.rsplit("/", 1)[1])
        for v in value.values():
            refs(v, found)
    elif isinstance(value, list):
        for v in value:
            refs(v, found)


def resolve_ref(doc, value):
    while isinstance(value, dict) and "$ref" in value and not value["$ref"].startswith("#/components/schemas/"):
        node = doc
        for part in value["$ref"][2:].split("/"):
            node = node[part]
        value = node
    return value


def github(octokit_dir, tgz_sha):
    source = octokit_dir / "generated" / "api.github.com.json"
    doc = json.loads(source.read_text())
    operations = []
    wanted = set()
    for method, path in GITHUB_OPERATIONS:
        op = doc["paths"][path][method]
        params = []
        for p in doc["paths"][path].get("parameters", []) + op.get("parameters", []):
            p = resolve_ref(doc, p)
            params.append({"name": p["name"], "in": p["in"], "required": p.get("required", False),
                           "schema": p.get("schema", {})})
        body = None
        if "requestBody" in op:
            rb = resolve_ref(doc, op["requestBody"])
            body = {"required": rb.get("required", False),
                    "schema": rb["content"]["application/json"]["schema"]}
        responses = {}
        for status, response in op.get("responses", {}).items():
            response = resolve_ref(doc, response)
            content = response.get("content", {}).get("application/json")
            responses[status] = content["schema"] if content and "schema" in content else None
        entry = {"method": method.upper(), "path": path, "operationId": op["operationId"],
                 "parameters": params, "requestBody": body, "responses": responses}
        refs(entry, wanted)
        operations.append(entry)
    schemas = doc["components"]["schemas"]
    closure, todo = {}, sorted(wanted)
    while todo:
        name = todo.pop()
        if name in closure:
            continue
        closure[name] = schemas[name]
        more = set()
        refs(schemas[name], more)
        todo.extend(sorted(more - closure.keys()))
    for op in operations:
        for p in op["parameters"]:
            p["schema"] = denull(p["schema"])
        if op["requestBody"]:
            op["requestBody"]["schema"] = denull(op["requestBody"]["schema"])
        op["responses"] = {k: denull(v) for k, v in op["responses"].items()}
    return {
        "source": {
            "package": f"npm @octokit/openapi@{OCTOKIT_VERSION}",
            "file": "generated/api.github.com.json",
            "openapi": doc["openapi"],
            "api_version": doc["info"]["version"],
            "tarball_sha256": tgz_sha,
            "file_sha256": sha256(source),
            "regenerate": "scripts/update-tracker-contracts.py",
        },
        "recommended_headers": {"Accept": "application/vnd.github+json",
                                "X-GitHub-Api-Version": "2022-11-28"},
        "operations": operations,
        "$defs": {k: denull(v) for k, v in sorted(closure.items())},
    }


GO_FUNC = re.compile(r"^func \(s \*\w+\) (\w+)\(([^)]*)\)", re.M)
GO_PATH = re.compile(r'u := fmt\.Sprintf\("([^"]+)"|NewRequest\(http\.Method\w+, "([^"]+)"')
GO_METHOD = re.compile(r"NewRequest\(http\.Method(\w+),")
GO_STRUCT = re.compile(r"^type (\w+) struct \{(.*?)^\}", re.M | re.S)
# `type ListIssueDiscussionsOptions ListOptions`: a named struct type with another's fields.
GO_ALIAS = re.compile(r"^type (\w+) (\w+)\s*$", re.M)
GO_TAG = re.compile(r'(?:url|json):"([^",]+)')


def go_structs(sources):
    """Struct name → (its own tag names, embedded struct names)."""
    structs = {}
    for text in sources:
        for name, body in GO_STRUCT.findall(text):
            fields, embedded = set(), []
            for line in body.splitlines():
                line = line.strip()
                if not line or line.startswith("//"):
                    continue
                tags = GO_TAG.findall(line)
                if tags:
                    fields.update(t.rstrip("[]") for t in tags if t != "-")
                elif re.fullmatch(r"\w+", line):
                    embedded.append(line)
            structs[name] = (fields, embedded)
        for name, other in GO_ALIAS.findall(text):
            structs.setdefault(name, (set(), [other]))
    return structs


def go_fields(structs, name, seen=()):
    if name not in structs or name in seen:
        return set()
    fields, embedded = structs[name]
    out = set(fields)
    for inner in embedded:
        out |= go_fields(structs, inner, seen + (name,))
    return out


def gitlab(src_dir, version):
    files = [src_dir / f for f in GO_GITLAB_FILES]
    sources = [f.read_text() for f in files] + [(src_dir / "gitlab.go").read_text()]
    structs = go_structs(sources)
    endpoints = []
    for file in files:
        text = file.read_text()
        matches = list(GO_FUNC.finditer(text))
        for i, match in enumerate(matches):
            body = text[match.end(): matches[i + 1].start() if i + 1 < len(matches) else len(text)]
            path, method = GO_PATH.search(body), GO_METHOD.search(body)
            if not path or not method:
                continue
            template = path.group(1) or path.group(2)
            parts, n = [], 0
            for segment in template.split("/"):
                if "%" in segment:
                    n += 1
                    parts.append("{}")
                else:
                    parts.append(segment)
            opt = re.search(r"opt \*(\w+)", match.group(2))
            params = sorted(go_fields(structs, opt.group(1))) if opt else []
            endpoints.append({"function": match.group(1), "file": file.name,
                              "method": method.group(1).upper(), "path": "/" + "/".join(parts),
                              "params": params})
    endpoints.sort(key=lambda e: (e["path"], e["method"], e["function"]))
    return {
        "source": {
            "package": f"Debian {GO_GITLAB_PACKAGE} {version}",
            "how": "per client function: the method and path it requests (fmt.Sprintf placeholders as {}), "
                   "and the url/json tag names of its options struct, embedded structs included",
            "files": {f.name: sha256(f) for f in files},
            "regenerate": "scripts/update-tracker-contracts.py",
        },
        "endpoints": endpoints,
    }


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--octokit", type=pathlib.Path, help="an unpacked @octokit/openapi package")
    parser.add_argument("--octokit-sha", default="(unpacked by hand)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        octokit, octokit_sha = args.octokit, args.octokit_sha
        if octokit is None:
            octokit, octokit_sha = npm_pack("@octokit/openapi", OCTOKIT_VERSION, work)
        if not GO_GITLAB_SRC.exists():
            subprocess.run(["apt-get", "install", "-y", "-q", GO_GITLAB_PACKAGE], check=True)
        version = subprocess.run(["dpkg-query", "-W", "-f=${Version}", GO_GITLAB_PACKAGE],
                                 check=True, capture_output=True, text=True).stdout
        OUT.mkdir(parents=True, exist_ok=True)
        (OUT / "github.json").write_text(json.dumps(github(octokit, octokit_sha), indent=1, sort_keys=True) + "\n")
        (OUT / "gitlab.json").write_text(json.dumps(gitlab(GO_GITLAB_SRC, version), indent=1, sort_keys=True) + "\n")
    for name in ("github.json", "gitlab.json"):
        print(f"{OUT / name}: {sha256(OUT / name)}")


if __name__ == "__main__":
    main()
