// Re-run the build when a migration is added or changed: `sqlx::migrate!` embeds the directory.
fn main() {
    println!("cargo:rerun-if-changed=../../migrations");
}
