//! Spend per role as an inline SVG bar chart, drawn on the server (no script, no image request).

use maud::{Markup, html};

use super::format;

/// One bar: a role's tokens.
pub struct Bar<'a> {
    pub label: &'a str,
    /// Uncached prompt tokens.
    pub prompt: i64,
    pub cached: i64,
    pub completion: i64,
    /// Cost text shown after the bar (`$0.12`, `no price`).
    pub note: String,
}

const WIDTH: i64 = 640;
const LABEL_WIDTH: i64 = 110;
const BAR_AREA: i64 = 360;
const ROW: i64 = 30;
const BAR_HEIGHT: i64 = 18;
const LEGEND: i64 = 28;

/// Stacked horizontal bars (uncached prompt, cached prompt, completion), scaled to the largest.
pub fn role_bars(bars: &[Bar<'_>]) -> Markup {
    let largest = bars
        .iter()
        .map(|b| b.prompt + b.cached + b.completion)
        .max()
        .unwrap_or(0)
        .max(1);
    let scale = |tokens: i64| tokens.max(0) * BAR_AREA / largest;
    let height = LEGEND + ROW * bars.len() as i64 + 4;
    let legend = [
        ("prompt", "prompt"),
        ("cached", "cached prompt"),
        ("completion", "completion"),
    ];
    html! {
        svg.chart xmlns="http://www.w3.org/2000/svg" role="img" width=(WIDTH) height=(height)
            viewBox=(format!("0 0 {WIDTH} {height}")) aria-label="Tokens per role" {
            @for (i, (class, text)) in legend.iter().enumerate() {
                @let x = LABEL_WIDTH + i as i64 * 130;
                rect class=(class) x=(x) y="4" width="12" height="12" {}
                text x=(x + 18) y="14" { (text) }
            }
            @for (row, bar) in bars.iter().enumerate() {
                @let y = LEGEND + row as i64 * ROW;
                @let (p, c, o) = (scale(bar.prompt), scale(bar.cached), scale(bar.completion));
                text x="0" y=(y + 14) { (format::clip(bar.label, 14)) }
                rect.prompt x=(LABEL_WIDTH) y=(y) width=(p) height=(BAR_HEIGHT) {}
                rect.cached x=(LABEL_WIDTH + p) y=(y) width=(c) height=(BAR_HEIGHT) {}
                rect.completion x=(LABEL_WIDTH + p + c) y=(y) width=(o) height=(BAR_HEIGHT) {}
                text x=(LABEL_WIDTH + p + c + o + 6) y=(y + 14) {
                    (format::count(bar.prompt + bar.cached + bar.completion)) " tok · " (bar.note)
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bars_scale_to_the_largest_and_labels_are_escaped() {
        let bars = [
            Bar {
                label: "planner",
                prompt: 300,
                cached: 0,
                completion: 60,
                note: "$0.01".into(),
            },
            Bar {
                label: "<b>x",
                prompt: 90,
                cached: 0,
                completion: 0,
                note: "no price".into(),
            },
        ];
        let svg = role_bars(&bars).into_string();
        assert!(svg.contains(r#"width="300""#), "{svg}");
        assert!(svg.contains(r#"width="90""#), "{svg}");
        assert!(svg.contains("&lt;b&gt;x"), "{svg}");
    }
}
