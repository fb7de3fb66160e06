//! One test per class of error, each checking the line and column it names, and the plan a
//! good profile makes.

use crate::{parse, parse_set, Overrides, ProfileError};
use fathom_proto::profile::{Op, Protocol, Repeat, Size};

const STREAM: &str = r#"name = "s"

[vars]
size = "64K"
threads = 2

[[group]]
name = "g"
threads = "$threads"

[[group.transaction]]
flowops = [{ op = "connect" }]

[[group.transaction]]
duration = "2s"
flowops = [{ op = "write", size = "${size}" }]
"#;

fn err(text: &str) -> ProfileError {
    parse("p.toml", text, &Overrides::default()).expect_err("an error")
}

/// Asserts that `text` is refused at `line`:`column` with a message that starts with `says`.
fn refused_at(text: &str, line: usize, column: usize, says: &str) {
    let e = err(text);
    assert_eq!((e.line, e.column), (line, column), "{e}");
    assert!(e.message.starts_with(says), "{e}");
}

/// The error's line and column, and its message.
fn at(e: &ProfileError) -> (usize, usize, &str) {
    (e.line, e.column, e.message.as_str())
}

#[test]
fn a_good_profile_makes_its_plan() {
    let plan = parse("dir/p.toml", STREAM, &Overrides::default()).unwrap();
    assert_eq!(plan.name, "s");
    let g = &plan.groups[0];
    assert_eq!(
        (g.threads, g.flows_per_thread, g.protocol),
        (2, 1, Protocol::Tcp)
    );
    assert_eq!(g.program.seed, crate::DEFAULT_SEED);
    let t = &g.program.transactions;
    assert_eq!(t[0].repeat, Repeat::Iterations(1));
    assert_eq!(t[1].repeat, Repeat::DurationMs(2000));
    assert_eq!(t[1].ops[0].op, Op::Write(Size::Fixed(65536)));
    assert_eq!(crate::flows(&plan), 2);
}

#[test]
fn a_profile_without_name_takes_the_file_stem() {
    let text = STREAM.replace("name = \"s\"\n", "");
    let plan = parse("dir/web-like.toml", &text, &Overrides::default()).unwrap();
    assert_eq!(plan.name, "web-like");
}

#[test]
fn an_unknown_key_is_named_with_the_nearest() {
    let e = err(&STREAM.replace("threads = \"$threads\"", "thread = 4"));
    assert_eq!(at(&e).0, 9);
    assert_eq!(at(&e).1, 1);
    assert!(
        e.message
            .contains("unknown key 'thread' in [[group]]; did you mean 'threads'?"),
        "{e}"
    );
    assert!(e.to_string().starts_with("p.toml:9:1: "), "{e}");
}

#[test]
fn a_bad_size_is_refused_at_its_value() {
    let text = STREAM.replace("\"${size}\"", "\"64Q\"");
    refused_at(&text, 16, 35, "size: '64Q' is not a size; try 64K");
    let e = err(&STREAM.replace("\"${size}\"", "\"rand(1K,64)\""));
    assert!(
        e.message.contains("the low end is above the high end"),
        "{e}"
    );
    assert_eq!((e.line, e.column), (16, 35), "{e}");
}

#[test]
fn an_unknown_flowop_suggests_the_nearest() {
    let e = err(&STREAM.replace("op = \"write\"", "op = \"wirte\""));
    assert_eq!(
        at(&e),
        (16, 19, "op: unknown flowop 'wirte'; did you mean 'write'?")
    );
}

#[test]
fn a_read_after_disconnect_is_refused() {
    let text = STREAM.replace(
        "{ op = \"write\", size = \"${size}\" }",
        "{ op = \"disconnect\" }, { op = \"read\", size = 1 }",
    );
    let text = text.replace("duration = \"2s\"", "iterations = 1");
    refused_at(&text, 16, 42, "read after disconnect without a new connect");
}

#[test]
fn a_repeating_transaction_must_end_as_it_began() {
    let e = err(&STREAM.replace(
        "{ op = \"write\", size = \"${size}\" }",
        "{ op = \"connect\" }",
    ));
    assert!(e.message.contains("already connected"), "{e}");
    let text = "[[group]]\n[[group.transaction]]\niterations = 2\n\
                flowops = [{ op = \"connect\" }, { op = \"write\", size = 1 }]\n";
    let e = err(text);
    assert_eq!((e.line, e.column), (4, 19), "{e}");
    assert!(e.message.contains("next iteration"), "{e}");
}

#[test]
fn flowops_must_suit_the_protocol() {
    let e = err(&STREAM.replace("name = \"g\"", "name = \"g\"\nprotocol = \"udp\""));
    assert!(
        e.message
            .contains("write needs protocol tcp or tls; this group's protocol is udp: use sendto"),
        "{e}"
    );
}

#[test]
fn a_variable_never_set_is_named_where_it_is_used() {
    let text = STREAM.replace("name = \"g\"", "name = \"g\"\nremote = \"$h1\"");
    refused_at(&text, 9, 10, "remote: variable '$h1' is never set");
}

#[test]
fn set_overrides_env_overrides_default() {
    let threads = |o: &Overrides| parse("p.toml", STREAM, o).unwrap().groups[0].threads;
    let mut o = Overrides::default();
    assert_eq!(threads(&o), 2);
    o.env.push(("threads".into(), "3".into()));
    assert_eq!(threads(&o), 3);
    o.sets.push(parse_set("threads=4").unwrap());
    assert_eq!(threads(&o), 4);
    o.sets.push(("thraeds".into(), "5".into()));
    let e = parse("p.toml", STREAM, &o).unwrap_err();
    assert!(e.message.contains("did you mean 'threads'?"), "{e}");
}

#[test]
fn a_bad_variable_value_says_where_it_came_from() {
    let o = Overrides {
        sets: vec![("threads".into(), "many".into())],
        env: Vec::new(),
    };
    let e = parse("p.toml", STREAM, &o).unwrap_err();
    assert_eq!((e.line, e.column), (9, 11), "{e}");
    assert_eq!(
        e.message,
        "threads: 'many' ($threads = 'many' from --set) is not a whole number"
    );
}

#[test]
fn the_plans_bounds_point_at_the_value() {
    let e = err(&STREAM.replace("\"$threads\"", "0"));
    assert_eq!(at(&e), (9, 11, "threads: 0 is outside 1..=100000"));
    let text = STREAM.replace("size = \"${size}\"", "size = 1, count = 0");
    refused_at(&text, 16, 46, "count: 0 is outside");
    let second = "[[group]]\nname = \"g\"\n[[group.transaction]]\n\
                  flowops = [{ op = \"think\", time = \"1ms\" }]\n";
    let e = err(&format!("{STREAM}\n{second}"));
    assert_eq!((e.line, e.column), (19, 8), "{e}");
}

#[test]
fn syntax_errors_and_remotes_name_their_place() {
    let e = err("name = \n");
    assert_eq!((e.line, e.file.as_str()), (1, "p.toml"), "{e}");
    let e = err(&STREAM.replace("name = \"g\"", "name = \"g\"\nremote = \"h2:0\""));
    assert!(e.message.contains("port '0' is not in 1..=65535"), "{e}");
    for good in [
        "h2",
        "10.0.0.2:5301",
        "[::1]:5301",
        "::1",
        "agent.example:5301",
    ] {
        let text = STREAM.replace(
            "name = \"g\"",
            &format!("name = \"g\"\nremote = \"{good}\""),
        );
        parse("p.toml", &text, &Overrides::default()).unwrap();
    }
}

#[test]
fn the_plan_is_shown_as_it_runs() {
    let plan = parse("p.toml", STREAM, &Overrides::default()).unwrap();
    let text = crate::show(&plan);
    assert!(
        text.contains("group g: 2 threads x 1 flow per thread = 2 flows to the local agent, tcp"),
        "{text}"
    );
    assert!(
        text.contains("  transaction 2: for 2s\n    write 64K\n"),
        "{text}"
    );
}

#[test]
fn the_environment_sets_variables_by_prefix() {
    std::env::set_var("FATHOM_VAR_pformat_unit_only", "7");
    let o = Overrides::from_env(Vec::new());
    assert!(
        o.env.contains(&("pformat_unit_only".into(), "7".into())),
        "{o:?}"
    );
}

#[test]
fn sizes_take_every_form() {
    let with = |size: &str| {
        let text = STREAM.replace("\"${size}\"", size);
        let plan = parse("p.toml", &text, &Overrides::default()).unwrap();
        plan.groups[0].program.transactions[1].ops[0].op.clone()
    };
    assert_eq!(with("1460"), Op::Write(Size::Fixed(1460)));
    assert_eq!(
        with("\"rand(64,1K)\""),
        Op::Write(Size::Rand { lo: 64, hi: 1024 })
    );
    assert_eq!(with("[64, \"1K\"]"), Op::Write(Size::List(vec![64, 1024])));
    assert_eq!(with("\"64, 512\""), Op::Write(Size::List(vec![64, 512])));
    let think = STREAM.replace(
        "op = \"write\", size = \"${size}\"",
        // A timed transaction needs a data flowop beside its think.
        "op = \"think\", time = \"rand(100us,1ms)\" }, { op = \"write\", size = \"1K\"",
    );
    let plan = parse("p.toml", &think, &Overrides::default()).unwrap();
    let op = &plan.groups[0].program.transactions[1].ops[0].op;
    assert_eq!(*op, Op::Think(Size::Rand { lo: 100, hi: 1000 }));
}

#[test]
fn near_words_are_suggested() {
    let near = |w| crate::error::nearest(w, ["tcp", "udp", "tls", "threads", "write"]);
    assert_eq!(near("upd"), Some("udp"));
    assert_eq!(near("thraeds"), Some("threads"));
    assert_eq!(near("wirte"), Some("write"));
    assert_eq!(near("banana"), None);
}
