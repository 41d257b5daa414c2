//! The conversation of one explore and observation masking: tool outputs older than the last
//! `keep_turns` assistant turns are replaced by a one-line summary (tool, arguments, size), so the
//! prompt stays bounded however long the run.

use std::collections::HashMap;

use relay_tools::output::{estimate_tokens, group_thousands};

use crate::llm::{AssistantMessage, Message, ToolCall, ToolResult};

/// Characters of a call's arguments kept in a masked summary.
const SUMMARY_ARGUMENT_CHARS: usize = 120;

struct Entry {
    message: Message,
    /// For tool results: the assistant turn that asked for them.
    turn: Option<usize>,
}

/// The messages of one explore, in order.
pub(super) struct Conversation {
    entries: Vec<Entry>,
    summaries: HashMap<String, String>,
    turns: usize,
    keep_turns: usize,
}

impl Conversation {
    /// A fresh context: the system prompt, the repository's guidance (if any, right below the
    /// rules) and the question.
    pub(super) fn new(
        system: String,
        guidance: Option<String>,
        question: String,
        keep_turns: usize,
    ) -> Self {
        let entries = std::iter::once(Message::System(system))
            .chain(guidance.map(Message::User))
            .chain(std::iter::once(Message::User(question)))
            .map(|message| Entry {
                message,
                turn: None,
            })
            .collect();
        Self {
            entries,
            summaries: HashMap::new(),
            turns: 0,
            keep_turns,
        }
    }

    pub(super) fn push_assistant(&mut self, message: AssistantMessage) {
        self.turns += 1;
        self.entries.push(Entry {
            message: Message::Assistant(message),
            turn: None,
        });
    }

    pub(super) fn push_user(&mut self, text: String) {
        self.entries.push(Entry {
            message: Message::User(text),
            turn: None,
        });
    }

    /// The result of `call`, asked for in the latest assistant turn.
    pub(super) fn push_tool(&mut self, call: &ToolCall, result: ToolResult) {
        self.summaries
            .insert(result.call_id.clone(), summary(call, &result));
        self.entries.push(Entry {
            message: Message::Tool(result),
            turn: Some(self.turns),
        });
    }

    /// The messages to send: recent tool outputs verbatim, older ones as summaries.
    pub(super) fn request_messages(&self) -> Vec<Message> {
        let oldest_kept = if self.keep_turns == 0 {
            0
        } else {
            self.turns.saturating_sub(self.keep_turns) + 1
        };
        self.entries
            .iter()
            .map(|entry| match (&entry.message, entry.turn) {
                (Message::Tool(result), Some(turn)) if turn < oldest_kept => {
                    let content = self
                        .summaries
                        .get(&result.call_id)
                        .cloned()
                        .unwrap_or_default();
                    Message::Tool(ToolResult {
                        content,
                        ..result.clone()
                    })
                }
                (message, _) => message.clone(),
            })
            .collect()
    }
}

/// `[masked] grep {"pattern":"Plan"} → ~1,234 tokens, 56 lines (call again to see it)`.
fn summary(call: &ToolCall, result: &ToolResult) -> String {
    let mut arguments: String = call
        .arguments
        .chars()
        .take(SUMMARY_ARGUMENT_CHARS)
        .collect();
    if call.arguments.chars().count() > SUMMARY_ARGUMENT_CHARS {
        arguments.push('…');
    }
    let outcome = if result.is_error { "error" } else { "output" };
    format!(
        "[older {outcome} masked] {} {arguments} → ~{} tokens, {} lines (call again if you need it)",
        call.name,
        group_thousands(estimate_tokens(&result.content)),
        group_thousands(result.content.lines().count())
    )
}
