//! The page shell: head (stylesheet, no inline script), navigation, sign-out.

use maud::{DOCTYPE, Markup, html};

/// Which navigation entry is current.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Nav {
    Issues,
    Projects,
    Operations,
    /// A page below the issues (one issue, one job).
    Detail,
}

/// A signed-in page.
pub fn page(title: &str, nav: Nav, body: Markup) -> Markup {
    signed_in(title, nav, body, None)
}

/// A signed-in page that loads one of the embedded scripts (only the live trace has one).
pub fn page_with_script(title: &str, nav: Nav, body: Markup, script: &str) -> Markup {
    signed_in(title, nav, body, Some(script))
}

fn signed_in(title: &str, nav: Nav, body: Markup, script: Option<&str>) -> Markup {
    let current = |entry: Nav| if entry == nav { "current" } else { "" };
    shell(
        title,
        html! {
            header.top {
                a.brand href="/ui" { "Relay" }
                nav {
                    a class=(current(Nav::Issues)) href="/ui" { "Issues" }
                    a class=(current(Nav::Projects)) href="/ui/projects" { "Projects" }
                    a class=(current(Nav::Operations)) href="/ui/ops" { "Operations" }
                }
                form.signout method="post" action="/ui/logout" {
                    button type="submit" { "Sign out" }
                }
                form.signout method="post" action="/ui/logout/everywhere" {
                    button type="submit" title="End every session, in every browser" { "Sign out everywhere" }
                }
            }
            main { (body) }
        },
        script,
    )
}

/// A page without navigation (the sign-in form).
pub fn bare(title: &str, body: Markup) -> Markup {
    shell(title, html! { main { (body) } }, None)
}

fn shell(title: &str, body: Markup, script: Option<&str>) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                meta name="referrer" content="same-origin";
                title { (title) " · Relay" }
                link rel="stylesheet" href="/ui/assets/style.css";
                @if let Some(script) = script {
                    script src=(script) defer {}
                }
            }
            body { (body) }
        }
    }
}
