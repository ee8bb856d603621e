"use client";
// A client page importing `docauto/realtime` (rendered on the server first, then in the browser).
import { useEffect, useState } from "react";
import { RealtimeTranscriber } from "docauto/realtime";

export default function Page() {
  const [state, setState] = useState("loading");
  useEffect(() => {
    try {
      const transcriber = new RealtimeTranscriber({ url: "wss://realtime.example/v1/realtime/socket?ticket=t" });
      setState(typeof transcriber.start === "function" ? "constructed" : "no start()");
    } catch (e) {
      setState(`error ${e && e.code}`);
    }
  }, []);
  return <p id="state">{state}</p>;
}
