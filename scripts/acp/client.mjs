// End-to-end test of `tally acp` with the official ACP TypeScript SDK's
// client, against the scripted demo model. It runs the demo's fix story
// in a new session (the edit shows with its diff and is allowed, the test
// run is rejected), checks the streamed updates, loads the session in a
// second process and checks the replayed history, then cancels a turn
// while it asks for permission. A third process drives ACP's stable
// session set: the config options (mode, model, the Network switch),
// usage updates with Tally's context level and cost, an MCP server's form
// as elicitation/create (a form, and a page in URL mode), the effort option,
// message IDs, a session with an additional directory the model writes in,
// session/close and session/delete.
// Any mismatch fails the run loudly.
//
// Environment: TALLY (the binary), TALLY_ACP_DATA (a fresh data folder),
// TALLY_ACP_WORKSPACE (the demo's sample project), TALLY_ACP_FIXTURE (the
// fixture binary, run as the MCP server), TALLY_ACP_PAGE (its loopback
// page), TALLY_ACP_EXTRA (an empty folder, symlinks resolved, given as an
// additional directory), OPENAI_BASE_URL (the scripted model) and
// OPENAI_API_KEY;
// ACP_TRACE=1 prints each update as it arrives.
import { spawn } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Readable, Writable } from "node:stream";

import { client, methods, ndJsonStream, PROTOCOL_VERSION } from "@agentclientprotocol/sdk";

const PROMPT = "The calculator's Add function gives wrong results. Find the bug, fix it and run the tests.";
const env = (name) => {
  const v = process.env[name];
  if (!v) {
    console.error(`acp client: ${name} is not set; run scripts/acp/run.sh`);
    process.exit(2);
  }
  return v;
};
const tally = env("TALLY");
const data = env("TALLY_ACP_DATA");
const ws = env("TALLY_ACP_WORKSPACE");
const baseURL = env("OPENAI_BASE_URL");
const fixture = env("TALLY_ACP_FIXTURE");
const page = env("TALLY_ACP_PAGE");
const extra = env("TALLY_ACP_EXTRA");

const failures = [];
function check(ok, what, detail) {
  if (!ok) {
    failures.push(what);
    console.error(`FAIL: ${what}${detail === undefined ? "" : `\n  got: ${JSON.stringify(detail)}`}`);
  }
  return ok;
}

const watchdog = setTimeout(() => {
  console.error("FAIL: the test did not finish within 120 s");
  process.exit(1);
}, 120_000);

// connect starts `tally acp` and runs op with the client context, the
// collected session/update notifications and a settable permission
// handler. It resolves with op's result once the agent has exited.
async function connect(name, op) {
  const child = spawn(tally, ["acp", "--data", data, "--base-url", baseURL, "--fetch-local"], {
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (d) => (stderr += d));
  const exited = new Promise((resolve) => child.on("exit", (code, signal) => resolve({ code, signal })));
  const state = {
    updates: [],
    permissions: [],
    fsReads: [],
    fsWrites: [],
    forms: [],
    answer: async () => ({ outcome: { outcome: "selected", optionId: "allow_once" } }),
    elicit: async () => ({ action: "decline" }),
  };
  const app = client({ name: "tally-acp-e2e" })
    .onNotification(methods.client.session.update, ({ params }) => {
      state.updates.push(params.update);
      if (process.env.ACP_TRACE) console.error((performance.now()/1000).toFixed(3), params.update.sessionUpdate, params.update.title ?? params.update.status ?? "");
    })
    .onRequest(methods.client.session.requestPermission, async ({ params }) => {
      state.permissions.push(params);
      return state.answer(params);
    })
    .onRequest(methods.client.fs.readTextFile, async ({ params }) => {
      // The editor's buffer; this client has no unsaved changes, so it is the file.
      state.fsReads.push(params.path);
      return { content: readFileSync(params.path, "utf8") };
    })
    .onRequest(methods.client.fs.writeTextFile, async ({ params }) => {
      state.fsWrites.push(params);
      writeFileSync(params.path, params.content); // saved, as an editor does
      return {};
    })
    .onRequest(methods.client.elicitation.create, async ({ params }) => {
      state.forms.push(params);
      return state.elicit(params);
    });
  const stream = ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
  let result;
  try {
    result = await app.connectWith(stream, async (ctx) => {
      const init = await ctx.request(methods.agent.initialize, {
        protocolVersion: PROTOCOL_VERSION,
        clientCapabilities: {
          fs: { readTextFile: true, writeTextFile: true },
          terminal: false,
          elicitation: { form: {}, url: {} },
          session: { configOptions: { boolean: {} } },
        },
        clientInfo: { name: "tally-acp-e2e", version: "1" },
      });
      return op(ctx, state, init);
    });
  } catch (err) {
    check(false, `${name}: ${err?.message ?? err}`, err?.data);
  }
  child.stdin.end();
  const { code, signal } = await exited;
  check(code === 0, `${name}: tally acp exited with ${code ?? signal}`, stderr.split("\n").slice(-5));
  return result;
}

const text = (updates, kind) =>
  updates.filter((u) => u.sessionUpdate === kind && u.content?.type === "text").map((u) => u.content.text).join("");
const calls = (updates) => updates.filter((u) => u.sessionUpdate === "tool_call");
const lastStatus = (updates, id) => {
  let status;
  for (const u of updates) {
    if ((u.sessionUpdate === "tool_call" || u.sessionUpdate === "tool_call_update") && u.toolCallId === id && u.status) {
      status = u.status;
    }
  }
  return status;
};
const diffOf = (call) => (call?.content ?? []).find((c) => c.type === "diff");
const lastPlan = (updates) => updates.filter((u) => u.sessionUpdate === "plan").at(-1);
const calcPath = join(ws, "calc", "calc.go");

// 1. A new session runs the fix story.
const t0 = performance.now();
const sessionId = await connect("new session", async (ctx, state, init) => {
  check(init.protocolVersion === 1, "initialize answers protocol version 1", init.protocolVersion);
  const caps = init.agentCapabilities ?? {};
  check(caps.loadSession === true, "initialize offers session/load", caps);
  check(caps.promptCapabilities?.embeddedContext === true, "initialize takes embedded context", caps.promptCapabilities);
  check(caps.sessionCapabilities?.list !== undefined, "initialize offers session/list", caps.sessionCapabilities);
  check(typeof caps._meta?.tally?.fileSystem === "string", "initialize says how Tally uses the file system", caps._meta);

  const created = await ctx.request(methods.agent.session.new, { cwd: ws, mcpServers: [] });
  const id = created.sessionId;
  const modes = created.modes?.availableModes?.map((m) => m.id) ?? [];
  check(created.modes?.currentModeId === "ask", "a new session starts in the ask mode", created.modes);
  check(["read-only", "ask", "auto-edit"].every((m) => modes.includes(m)), "the modes are Tally's permission modes", modes);
  let refused = false;
  await ctx.request(methods.agent.session.setMode, { sessionId: id, modeId: "yolo" }).catch(() => (refused = true));
  check(refused, "session/set_mode refuses an unknown mode");

  state.answer = async (p) => ({
    outcome: { outcome: "selected", optionId: p.toolCall.kind === "execute" ? "reject_once" : "allow_once" },
  });
  const started = performance.now();
  const resp = await ctx.request(methods.agent.session.prompt, { sessionId: id, prompt: [{ type: "text", text: PROMPT }] });
  console.log(`prompt turn over ACP: ${(performance.now() - started).toFixed(0)} ms, ${state.updates.length} updates`);
  check(resp.stopReason === "end_turn", "the turn ends with end_turn", resp);

  const u = state.updates;
  check(text(u, "agent_message_chunk").includes("Fixed, not tested"), "the reply streams as agent_message_chunk", text(u, "agent_message_chunk"));
  check(text(u, "agent_thought_chunk").length > 0, "the reasoning streams as agent_thought_chunk");
  const edit = calls(u).find((c) => c.kind === "edit");
  if (check(edit !== undefined, "the edit shows as a tool_call of kind edit", calls(u).map((c) => c.title))) {
    const d = diffOf(edit);
    check(d?.path === calcPath, "the edit's diff names calc/calc.go by its absolute path", d?.path);
    check(d?.oldText?.includes("return a - b") && d?.newText?.includes("return a + b"), "the diff is the whole file before and after", d);
    check(lastStatus(u, edit.toolCallId) === "completed", "the edit's tool_call_update says completed", lastStatus(u, edit.toolCallId));
    check(edit.locations?.[0]?.path === calcPath, "the edit's location is the file", edit.locations);
    const asked = state.permissions.find((p) => p.toolCall.toolCallId === edit.toolCallId);
    if (check(asked !== undefined, "the edit asks with session/request_permission", state.permissions.length)) {
      const kinds = asked.options.map((o) => o.kind);
      check(["allow_once", "allow_always", "reject_once"].every((k) => kinds.includes(k)), "approve, always allow and deny are offered", asked.options);
      check(diffOf(asked.toolCall) !== undefined, "the permission request shows the diff", asked.toolCall);
    }
  }
  const run = calls(u).find((c) => c.kind === "execute");
  check(run && lastStatus(u, run.toolCallId) === "failed", "the rejected test run ends failed", run && lastStatus(u, run.toolCallId));
  check(!calls(u).some((c) => c.title.startsWith("checklist")), "the checklist tools show as the plan, not as calls");
  const plan = lastPlan(u);
  check(plan?.entries?.length === 3 && plan.entries[0].content === "Find the bug in Add", "the checklist is the plan", plan);
  check(plan?.entries?.[0]?.status === "completed", "the plan's first entry is completed", plan?.entries?.[0]);
  check(u.some((x) => x.sessionUpdate === "usage_update" && x.used > 0), "the context level comes as usage_update");
  check(u.some((x) => x.sessionUpdate === "available_commands_update"), "the slash commands come as available_commands_update");
  check(readFileSync(calcPath, "utf8").includes("return a + b"), "the allowed edit is on disk");
  check(state.fsReads.includes(calcPath), "read_file takes calc/calc.go from the editor (fs/read_text_file)", state.fsReads);
  const shown = state.fsWrites.find((w) => w.path === calcPath);
  check(shown?.content?.includes("return a + b") && shown?.sessionId === id, "the edit is shown to the editor (fs/write_text_file)", state.fsWrites);

  const listed = await ctx.request(methods.agent.session.list, { cwd: ws });
  check(listed.sessions.some((s) => s.sessionId === id && s.title), "session/list has the session with its title", listed);
  return id;
});
console.log(`new session, fix story, exit: ${(performance.now() - t0).toFixed(0)} ms`);

// 2. Another process loads it, sees the history, and cancels a turn.
if (sessionId) {
  await connect("load session", async (ctx, state) => {
    await ctx.request(methods.agent.session.load, { sessionId, cwd: ws, mcpServers: [] });
    const u = state.updates.splice(0);
    check(text(u, "user_message_chunk") === PROMPT, "session/load replays the prompt as user_message_chunk", text(u, "user_message_chunk"));
    check(text(u, "agent_message_chunk").includes("Fixed, not tested"), "session/load replays the reply", text(u, "agent_message_chunk"));
    const edit = calls(u).find((c) => c.kind === "edit");
    check(edit?.status === "completed" && diffOf(edit) !== undefined, "session/load replays the edit, completed, with its diff", edit);
    check(lastPlan(u)?.entries?.length === 3, "session/load replays the plan", lastPlan(u));

    let cancelled = false;
    state.answer = async () => {
      await ctx.notify(methods.agent.session.cancel, { sessionId });
      cancelled = true;
      return { outcome: { outcome: "cancelled" } };
    };
    const resp = await ctx.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: PROMPT }] });
    check(cancelled, "the second turn asked for permission before it was cancelled");
    check(resp.stopReason === "cancelled", "session/cancel ends the turn with stopReason cancelled", resp);

    let missing = false;
    await ctx.request(methods.agent.session.load, { sessionId: "no-such-session", cwd: ws, mcpServers: [] }).catch(() => (missing = true));
    check(missing, "session/load of an unknown session is an error");
  });
}

// 3. ACP's stable session set, in a third process.
const option = (options, id) => (options ?? []).find((o) => o.id === id);
const toolText = (updates) =>
  updates
    .filter((u) => u.sessionUpdate === "tool_call" || u.sessionUpdate === "tool_call_update")
    .flatMap((u) => u.content ?? [])
    .filter((c) => c.type === "content" && c.content?.type === "text")
    .map((c) => c.content.text)
    .join("\n");
const usages = (updates) => updates.filter((u) => u.sessionUpdate === "usage_update");
await connect("stable session set", async (ctx, state, init) => {
  const caps = init.agentCapabilities?.sessionCapabilities ?? {};
  check(caps.close !== undefined && caps.delete !== undefined, "initialize offers session/close and session/delete", caps);
  const say = (sessionId, text) => ctx.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] });

  const created = await ctx.request(methods.agent.session.new, {
    cwd: ws,
    mcpServers: [{ name: "forms", command: fixture, args: ["mcp"], env: [] }],
  });
  const id = created.sessionId;
  const mode = option(created.configOptions, "mode");
  check(mode?.type === "select" && mode.category === "mode" && mode.currentValue === "ask", "the mode is a config option", mode);
  const model = option(created.configOptions, "model");
  check(
    model?.type === "select" && model.category === "model" && model.options.some((o) => o.value === "second/deepseek-reasoner"),
    "the model is a config option offering the second profile's model",
    model,
  );
  const effort = option(created.configOptions, "effort");
  check(effort?.type === "select" && effort.category === "thought_level" && effort.currentValue === "default" && effort.options.some((o) => o.value === "high"),
    "the reasoning effort is a thought_level config option", effort);
  const net = option(created.configOptions, "network");
  check(net?.type === "boolean" && net.currentValue === false, "the Network switch is a boolean config option, off", net);

  // The Network switch: off, web_fetch is refused saying how to switch it on.
  await say(id, "Fetch the page");
  let u = state.updates.splice(0);
  check(toolText(u).includes('config option "network"'), "with Network off, web_fetch's refusal says how to switch it on", toolText(u));
  const switched = await ctx.request(methods.agent.session.setConfigOption, { sessionId: id, configId: "network", type: "boolean", value: true });
  check(option(switched.configOptions, "network")?.currentValue === true, "session/set_config_option turns Network on", switched);
  await say(id, "Fetch the page");
  u = state.updates.splice(0);
  check(text(u, "agent_message_chunk").includes("Fixture page"), "with Network on, web_fetch brings the loopback page", text(u, "agent_message_chunk"));

  // An MCP server's form is asked with elicitation/create.
  state.elicit = async () => ({ action: "accept", content: { name: "Ada", plan: "pro", seats: 3 } });
  await say(id, "Sign me up");
  u = state.updates.splice(0);
  const form = state.forms[0];
  check(state.forms.length === 1 && form?.mode === "form" && form?.sessionId === id, "the MCP server's form comes as elicitation/create in form mode, scoped to the session", state.forms);
  check(form?.requestedSchema?.properties?.plan?.oneOf?.length === 2 && form?.requestedSchema?.required?.includes("name"), "the form's fields are its requested schema", form?.requestedSchema);
  const reply = text(u, "agent_message_chunk");
  check(reply.includes("action=accept") && reply.includes('"name":"Ada"') && reply.includes('"plan":"pro"') && reply.includes('"seats":3'), "the form's answers reach the MCP server", reply);
  // A page the MCP server asks the user to open comes in URL mode.
  state.elicit = async () => ({ action: "accept" });
  await say(id, "Sign me in");
  const signin = text(state.updates.splice(0), "agent_message_chunk");
  const page = state.forms.at(-1);
  check(state.forms.filter((f) => f.mode === "url").length === 1 && page?.mode === "url" && page?.url === "https://tracker.example.com/oauth/start" && page?.sessionId === id &&
    String(page?.elicitationId).endsWith("/login-1"), "the MCP server's page comes as elicitation/create in URL mode, scoped to the session", state.forms);
  check(signin.includes("action=accept"), "the editor's accept of the page reaches the MCP server", signin);
  const ids = u.filter((x) => x.sessionUpdate === "agent_message_chunk").map((x) => x.messageId);
  check(ids.length > 0 && ids.every((x) => typeof x === "string" && x.length === 36), "message chunks carry message IDs", ids);

  // Usage: Tally's context level and cost.
  const usage = usages(u).at(-1);
  check(usage?.used > 0 && usage.size > usage.used, "usage_update has the context level against the window", usage);
  check(usage?.cost?.currency === "USD" && usage.cost.amount > 0, "usage_update has the session's cost in USD", usage?.cost);
  check(usage?._meta?.tally?.requests >= 6, "usage_update's _meta.tally has the ledger's request count", usage?._meta);
  if (usage?.cost) {
    console.log(`usage: ${usage.used} of ${usage.size} tokens in context, $${usage.cost.amount.toFixed(6)} after ${usage._meta?.tally?.requests} requests (${(100 * (usage._meta?.tally?.cacheHitRatio ?? 0)).toFixed(1)}% cache hits)`);
  }

  // The model option switches the model.
  const moved = await ctx.request(methods.agent.session.setConfigOption, { sessionId: id, configId: "model", value: "second/deepseek-reasoner" });
  check(option(moved.configOptions, "model")?.currentValue === "second/deepseek-reasoner", "session/set_config_option switches the model", option(moved.configOptions, "model"));
  await say(id, "Sign me up");
  u = state.updates.splice(0);
  check(usages(u).at(-1)?._meta?.tally?.model === "deepseek-reasoner", "the next turn runs on the chosen model", usages(u).at(-1)?._meta);

  // The mode option is the session's mode.
  const ro = await ctx.request(methods.agent.session.setConfigOption, { sessionId: id, configId: "mode", value: "read-only" });
  check(option(ro.configOptions, "mode")?.currentValue === "read-only", "session/set_config_option sets the mode", option(ro.configOptions, "mode"));
  let refused = false;
  await ctx.request(methods.agent.session.setConfigOption, { sessionId: id, configId: "colour", value: "blue" }).catch(() => (refused = true));
  check(refused, "an unknown config option is refused");

  // An additional directory is a folder of the session: the model is told
  // it in its status block and writes there by absolute path.
  check(caps.additionalDirectories !== undefined, "initialize offers additionalDirectories", caps);
  const docs = await ctx.request(methods.agent.session.new, { cwd: ws, mcpServers: [], additionalDirectories: [extra] });
  await say(docs.sessionId, "Write the notes");
  u = state.updates.splice(0);
  const notes = join(extra, "NOTES.md");
  const wrote = calls(u).find((c) => c.kind === "edit");
  check(wrote?.locations?.[0]?.path === notes && lastStatus(u, wrote.toolCallId) === "completed",
    "the model writes NOTES.md in the additional directory by its absolute path", calls(u));
  check(existsSync(notes) && readFileSync(notes, "utf8") === "# Notes\n", "NOTES.md is on disk in the additional directory");
  let docsListed = await ctx.request(methods.agent.session.list, { cwd: ws });
  check(docsListed.sessions.find((s) => s.sessionId === docs.sessionId)?.additionalDirectories?.[0] === extra,
    "session/list reports the session's additional directory", docsListed);
  let relative = false;
  await ctx.request(methods.agent.session.new, { cwd: ws, mcpServers: [], additionalDirectories: ["docs"] }).catch(() => (relative = true));
  check(relative, "a relative additional directory is refused");
  await ctx.request(methods.agent.session.close, { sessionId: docs.sessionId });
  await ctx.request(methods.agent.session.resume, { sessionId: docs.sessionId, cwd: ws });
  docsListed = await ctx.request(methods.agent.session.list, { cwd: ws });
  check(!docsListed.sessions.find((s) => s.sessionId === docs.sessionId)?.additionalDirectories?.length,
    "resumed without additional directories, the session has none", docsListed);
  await say(docs.sessionId, "Write the notes");
  check(text(state.updates.splice(0), "agent_message_chunk").includes("No additional folder"),
    "the model is told the folder is gone");
  await ctx.request(methods.agent.session.close, { sessionId: docs.sessionId });

  // Close, then delete.
  await ctx.request(methods.agent.session.close, { sessionId: id });
  let closed = false;
  await say(id, "still there?").catch(() => (closed = true));
  check(closed, "after session/close the session takes no prompt");
  await ctx.request(methods.agent.session.delete, { sessionId: id });
  const listed = await ctx.request(methods.agent.session.list, { cwd: ws });
  check(!listed.sessions.some((s) => s.sessionId === id), "session/delete removes the session from session/list", listed);
});

clearTimeout(watchdog);
if (failures.length > 0) {
  console.error(`acp e2e: ${failures.length} check(s) failed`);
  process.exit(1);
}
console.log("acp e2e: every check passed");
