//! `relay migrate`.

use std::path::Path;

use anyhow::Context as _;

pub async fn run(config: Option<&Path>) -> anyhow::Result<()> {
    let loaded = super::load(config)?;
    let database = &loaded.settings.database;
    database
        .ensure_database()
        .await
        .context("failed to reach the database")?;
    let pool = database.pool().map_err(anyhow::Error::msg)?;
    relay_store::migrate(&pool)
        .await
        .context("failed to apply migrations")?;
    println!("migrations applied");
    Ok(())
}
