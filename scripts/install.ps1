<#
.SYNOPSIS
  Install kd-mcp on a Windows host: a venv, the package, a debugger check, the client config.

.DESCRIPTION
  Run from the kd-mcp checkout:   powershell -ExecutionPolicy Bypass -File scripts\install.ps1
  Creates .venv beside this script's parent folder, installs kd-mcp into it, runs
  `kd-mcp doctor` (which kd.exe/cdb.exe it found, their versions, the state file), and prints
  the JSON to paste into Claude Code (.mcp.json), Claude Desktop or Cursor.

.PARAMETER Python
  The Python launcher or interpreter to build the venv with (default: py -3, else python).

.PARAMETER Simulate
  Print a client config that runs kd-mcp against the simulated debugger.
#>
param(
    [string]$Python = "",
    [switch]$Simulate
)

$ErrorActionPreference = "Stop"
$root = Split-Path -Parent $PSScriptRoot
$venv = Join-Path $root ".venv"

if (-not $Python) {
    if (Get-Command py -ErrorAction SilentlyContinue) { $Python = "py -3" }
    elseif (Get-Command python -ErrorAction SilentlyContinue) { $Python = "python" }
    else { throw "No Python found: install Python 3.10 or newer (python.org or winget install Python.Python.3.12)." }
}

Write-Host "== creating $venv"
Invoke-Expression "$Python -m venv `"$venv`""
$py = Join-Path $venv "Scripts\python.exe"
& $py -m pip install --quiet --upgrade pip
Write-Host "== installing kd-mcp"
& $py -m pip install --quiet -e $root
if ($LASTEXITCODE -ne 0) { throw "pip install failed" }

$exe = Join-Path $venv "Scripts\kd-mcp.exe"
Write-Host "== kd-mcp doctor"
if ($Simulate) { & $exe doctor --simulate } else { & $exe doctor }
if ($LASTEXITCODE -ne 0) {
    Write-Warning ("kd-mcp doctor found a problem (above). Install the Debugging Tools for Windows " +
                   "(Windows SDK, or 'winget install Microsoft.WinDbg') or set debuggers.kd in the config.")
}

$serverArgs = @()
if ($Simulate) { $serverArgs = @("--simulate") }
$config = @{ mcpServers = @{ "kd-mcp" = @{ command = $exe; args = $serverArgs } } }
Write-Host ""
Write-Host "== client configuration (Claude Code .mcp.json, Claude Desktop, Cursor .cursor\mcp.json):"
$config | ConvertTo-Json -Depth 5
