/** The assistant panel's stylesheet (`/_airlock/assistant.css`, ui.ts): light and dark, above the page's own layers. */
export const STYLE = `.airlock-assistant-trigger{position:fixed;right:1rem;bottom:1rem;z-index:2147483000;font:14px/1.2 system-ui,sans-serif;padding:.5rem .75rem;border-radius:.5rem;border:1px solid #8886;background:#fff;color:#222;cursor:pointer;box-shadow:0 2px 8px #0002}
dialog.airlock-assistant{width:min(44rem,92vw);max-height:85vh;padding:0;border:1px solid #8886;border-radius:.75rem;font:15px/1.45 system-ui,sans-serif;color:#222;background:#fff;box-shadow:0 10px 40px #0004}
dialog.airlock-assistant[open]{display:flex;flex-direction:column}
dialog.airlock-assistant::backdrop{background:#0006}
.airlock-assistant-head{display:flex;align-items:center;justify-content:space-between;padding:.5rem .9rem;border-bottom:1px solid #8884}
.airlock-assistant-head h2{margin:0;font-size:16px}
.airlock-assistant-close{font:inherit;font-size:20px;line-height:1;border:0;background:none;color:inherit;cursor:pointer;padding:.2rem .4rem}
.airlock-assistant-log{overflow:auto;padding:.5rem .9rem;min-height:4rem;flex:1 1 auto}
.airlock-assistant-question{font-weight:600;margin:.75rem 0 .25rem}
.airlock-assistant-answer p{margin:.4rem 0}
.airlock-assistant-answer pre{overflow:auto;padding:.5rem;border-radius:.4rem;background:#8881}
.airlock-assistant-answer code{font:13px ui-monospace,monospace}
.airlock-assistant-error{color:#b91c1c}
.airlock-assistant-sources{margin:.25rem 0 .5rem;padding-left:1.2rem;font-size:13px}
dialog.airlock-assistant form{display:flex;gap:.5rem;margin:0;padding:.6rem .9rem;border-top:1px solid #8884}
dialog.airlock-assistant textarea{flex:1;box-sizing:border-box;font:inherit;padding:.45rem .6rem;border:1px solid #8888;border-radius:.4rem;resize:vertical}
dialog.airlock-assistant form button{font:inherit;padding:.4rem .8rem;border-radius:.4rem;border:1px solid #8888;background:#2563eb;color:#fff;cursor:pointer}
dialog.airlock-assistant form button:disabled{opacity:.6;cursor:progress}
.airlock-assistant-status,.airlock-assistant-help{margin:0;padding:.3rem .9rem;font-size:12px;color:#555}
.airlock-assistant-status:empty{display:none}
@media (prefers-color-scheme:dark){.airlock-assistant-trigger,dialog.airlock-assistant{background:#1e1e1e;color:#eee}.airlock-assistant-status,.airlock-assistant-help{color:#bbb}.airlock-assistant-error{color:#f87171}}
`;
