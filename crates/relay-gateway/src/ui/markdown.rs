//! Markdown (a spec written by a model) to HTML that cannot carry markup of its own: raw HTML
//! becomes text, images become their alt text, and only web and mail links stay links.
//! The only pre-escaped HTML on the status page comes from here.

use maud::{Markup, PreEscaped};
use pulldown_cmark::{CowStr, Event, Options, Parser, Tag, TagEnd};

pub fn render(source: &str) -> Markup {
    let options =
        Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
    let events = Parser::new_ext(source, options).filter_map(|event| match event {
        Event::Html(text) | Event::InlineHtml(text) => Some(Event::Text(text)),
        Event::Start(Tag::HtmlBlock) | Event::End(TagEnd::HtmlBlock) => None,
        // The alt text between them stays, as text: no request leaves for an image.
        Event::Start(Tag::Image { .. }) | Event::End(TagEnd::Image) => None,
        Event::Start(Tag::Link {
            link_type,
            dest_url,
            title,
            id,
        }) => {
            let dest_url = if safe_link(&dest_url) {
                dest_url
            } else {
                CowStr::Borrowed("#")
            };
            Some(Event::Start(Tag::Link {
                link_type,
                dest_url,
                title,
                id,
            }))
        }
        other => Some(other),
    });
    let mut out = String::with_capacity(source.len() * 3 / 2);
    pulldown_cmark::html::push_html(&mut out, events);
    PreEscaped(out)
}

fn safe_link(url: &str) -> bool {
    let lower = url.trim().to_ascii_lowercase();
    ["https://", "http://", "mailto:", "#"]
        .iter()
        .any(|scheme| lower.starts_with(scheme))
}

#[cfg(test)]
mod tests {
    use super::render;

    #[test]
    fn raw_html_is_text_and_unsafe_links_go_nowhere() {
        let html = render(
            "# Spec\n\n<script>alert(1)</script>\n\nsee <img src=x onerror=alert(1)> and \
             [x](javascript:alert(1)) and [ok](https://example.com) ![alt](https://t/p.png)\n",
        )
        .into_string();
        assert!(html.contains("<h1>Spec</h1>"), "{html}");
        assert!(
            html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
            "{html}"
        );
        assert!(
            html.contains("&lt;img src=x onerror=alert(1)&gt;"),
            "{html}"
        );
        assert!(
            !html.contains("<script") && !html.contains("<img"),
            "{html}"
        );
        assert!(!html.contains("javascript:"), "{html}");
        assert!(
            html.contains(r#"<a href="https://example.com">ok</a>"#),
            "{html}"
        );
        assert!(html.contains("alt"), "{html}");
    }
}
