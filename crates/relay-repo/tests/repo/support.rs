//! The tests' upstream repositories (real git, file:// remotes) and manager.

use std::path::{Path, PathBuf};
use std::process::Command;

use relay_repo::{Provider, RepoManager, RepoSettings, RepoSpec};

/// An upstream repository the manager clones from.
pub struct Upstream {
    _dir: tempfile::TempDir,
    pub path: PathBuf,
}

impl Upstream {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("upstream");
        std::fs::create_dir(&path).unwrap();
        git(&path, &["init", "--quiet", "--initial-branch=trunk"]);
        Self { _dir: dir, path }
    }

    /// Commits `files` (path, content) on the current branch and returns the SHA.
    pub fn commit(&self, files: &[(&str, &str)], message: &str) -> String {
        for (rel, content) in files {
            let path = self.path.join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, content).unwrap();
        }
        git(&self.path, &["add", "--all"]);
        git(
            &self.path,
            &[
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@example.com",
                "commit",
                "--quiet",
                "-m",
                message,
            ],
        );
        git(&self.path, &["rev-parse", "HEAD"])
    }

    pub fn version(&self, version: usize) -> String {
        let text = format!("version {version}\n");
        self.commit(
            &[("a.txt", &text), ("nested/b.txt", &text)],
            &format!("v{version}"),
        )
    }

    pub fn spec(&self) -> RepoSpec {
        RepoSpec::new(Provider::GitHub, "https://github.com", "acme/widgets")
            .with_local_path(format!("file://{}", self.path.display()))
    }
}

pub fn git(dir: &Path, args: &[&str]) -> String {
    let output = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap().trim().to_string()
}

pub fn manager(data_dir: &Path) -> RepoManager {
    RepoManager::new(RepoSettings {
        data_dir: data_dir.to_path_buf(),
        snapshot_retention_secs: 0,
        ..RepoSettings::default()
    })
    .unwrap()
}
