//! The plan's own checks ([`ProfilePlan::validate`]), their error placed at the value at
//! fault: a failing group, then transaction, then flowop is found by checking each alone.

use crate::error::{ProfileError, Source};
use crate::read::Span;
use crate::spans::{GroupSpans, Spans, TxSpans};
use fathom_proto::bounds::PlanError;
use fathom_proto::profile::{ProfilePlan, Program, Transaction};

/// Runs the plan's checks; an error names the file's key and the place of its value.
pub(crate) fn validate(
    src: &Source,
    plan: &ProfilePlan,
    spans: &Spans,
) -> Result<(), ProfileError> {
    let Err(e) = plan.validate() else {
        return Ok(());
    };
    let span = match e.field {
        "profile.name" => spans.name.clone(),
        "profile.groups" => spans
            .groups
            .get(fathom_proto::profile::MAX_GROUPS)
            .and_then(|g| g.header.clone()),
        "group.name" => duplicate(plan, spans).or_else(|| in_group(plan, spans, &e)),
        _ => in_group(plan, spans, &e),
    };
    let unit = if e.field == "flowop.think" {
        " (microseconds)"
    } else {
        ""
    };
    Err(src.error(span, format!("{}: {}{unit}", key(e.field), e.message)))
}

/// The name of the second group named like an earlier one.
fn duplicate(plan: &ProfilePlan, spans: &Spans) -> Span {
    let at = (1..plan.groups.len()).find(|&i| {
        plan.groups[..i]
            .iter()
            .any(|o| o.name == plan.groups[i].name)
    })?;
    spans.groups[at].name.clone()
}

/// The span of the first group's value that fails `e`'s check.
fn in_group(plan: &ProfilePlan, spans: &Spans, e: &PlanError) -> Span {
    let (g, gs) = plan
        .groups
        .iter()
        .zip(&spans.groups)
        .find(|(g, _)| g.validate().is_err())?;
    match e.field {
        "group.name" => gs.name.clone(),
        "group.threads" => gs.threads.clone(),
        "group.flows" => gs.flows.clone(),
        "group.window" => gs.window.clone(),
        "program.transactions" => gs
            .transactions
            .get(fathom_proto::profile::MAX_TRANSACTIONS)
            .and_then(|t| t.header.clone())
            .or(gs.header.clone()),
        _ => in_transaction(&g.program, gs, e.field),
    }
}

/// The span of the first transaction's value that fails the check of `field`.
fn in_transaction(program: &Program, gs: &GroupSpans, field: &str) -> Span {
    let alone = |t: &Transaction| Program {
        transactions: vec![t.clone()],
        seed: program.seed,
    };
    let (t, ts) = program
        .transactions
        .iter()
        .zip(&gs.transactions)
        .find(|(t, _)| alone(t).validate().is_err())?;
    match field {
        "transaction.iterations" | "transaction.duration" => ts.repeat.clone(),
        "transaction.rate" => ts.rate.clone(),
        "transaction.ops" => ts
            .ops
            .get(fathom_proto::profile::MAX_OPS)
            .map(|o| o.op.clone())
            .unwrap_or(ts.flowops.clone()),
        _ => in_op(t, ts, field, alone),
    }
}

/// The span of the first flowop's value that fails the check of `field`.
fn in_op(
    t: &Transaction,
    ts: &TxSpans,
    field: &str,
    alone: impl Fn(&Transaction) -> Program,
) -> Span {
    let (_, os) = t.ops.iter().zip(&ts.ops).find(|(f, _)| {
        let one = Transaction {
            ops: vec![(*f).clone()],
            ..t.clone()
        };
        alone(&one).validate().is_err()
    })?;
    match field {
        "flowop.count" => os.count.clone(),
        _ => os.size.clone(),
    }
}

/// The profile's key for a plan field.
fn key(field: &str) -> &str {
    match field {
        "profile.name" | "group.name" => "name",
        "profile.groups" => "[[group]]",
        "group.threads" => "threads",
        "group.flows" => "flows",
        "group.window" => "window",
        "program.transactions" => "[[group.transaction]]",
        "transaction.iterations" => "iterations",
        "transaction.duration" => "duration",
        "transaction.rate" => "rate",
        "transaction.ops" => "flowops",
        "flowop.count" => "count",
        "flowop.size" => "size",
        "flowop.think" => "time",
        other => other,
    }
}
