import { readRun, receive } from "../../webhook.js";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";
export const POST = receive;
export const GET = readRun;
